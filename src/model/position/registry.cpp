// The explicit table of position schemes; see registry.h.
#include "model/position/registry.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <mutex>

#include "common/error.h"

namespace tisa::model {

// The table: one line per scheme, in the order the config lists them ("none" first). Scheme `x`
// defines make_x_scheme() (one module; null for none) and make_x_settings() (its settings
// struct, model.position.x; null when it has none) in its own x.cpp; the line declares both.
#define TISA_POSITION_SCHEMES(SCHEME) \
  SCHEME(none)                        \
  SCHEME(shaw)                        \
  SCHEME(tisa)                        \
  SCHEME(rope)                        \
  SCHEME(alibi)                       \
  SCHEME(t5)                          \
  SCHEME(kerple_log)                  \
  SCHEME(fire)                        \
  SCHEME(sinusoidal)                  \
  SCHEME(learned_alibi)               \
  /* a new scheme: one line above */

#define TISA_DECLARE_SCHEME(x)                                                      \
  std::shared_ptr<RelativeSchemeImpl> make_##x##_scheme(const config::ModelConfig& c); \
  std::unique_ptr<config::SchemeSettings> make_##x##_settings();
TISA_POSITION_SCHEMES(TISA_DECLARE_SCHEME)
#undef TISA_DECLARE_SCHEME

namespace {

struct Entry {
  const char* name;                                             // model.position.relative
  SchemeFactory make;                                           // one module of the scheme
  std::unique_ptr<config::SchemeSettings> (*make_settings)();  // model.position.<name>; null result: none
};
#define TISA_SCHEME_ENTRY(x) {#x, make_##x##_scheme, make_##x##_settings},
const Entry kSchemes[] = {TISA_POSITION_SCHEMES(TISA_SCHEME_ENTRY)};
#undef TISA_SCHEME_ENTRY

const Entry& find_entry(const std::string& name) {
  for (const auto& e : kSchemes)
    if (name == e.name) return e;
  std::string known;
  for (const auto& e : kSchemes) known += std::string(known.empty() ? "" : ", ") + e.name;
  throw Error("unknown position scheme '" + name + "' (known: " + known + ")");
}

const char* sharing_words(config::PositionSharing s) {
  switch (s) {
    case config::PositionSharing::kPerLayer: return "per layer";
    case config::PositionSharing::kPerModule: return "per attention module";
    case config::PositionSharing::kModel: return "shared";
  }
  return "?";
}

// The configured modules, built only to be asked about (description, counts, FLOPs): the
// default CPU generator is restored afterwards so that asking never changes a later model's init.
SchemeModules inspect_schemes(const config::ModelConfig& c) {
  auto gen = at::detail::getDefaultCPUGenerator();
  torch::Tensor state;
  {
    std::lock_guard<std::mutex> lock(gen.mutex());
    state = gen.get_state();
  }
  torch::NoGradGuard no_grad;
  auto modules = make_configured_schemes(c);
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(state);
  return modules;
}

}  // namespace

void install_position_schemes() {
  std::vector<config::SchemeCatalogEntry> entries;
  for (const auto& e : kSchemes) entries.push_back({e.name, e.make_settings() ? e.make_settings : nullptr});
  config::install_position_schemes(std::move(entries));
}

config::PositionSharing effective_sharing(const config::ModelConfig& c) { return c.position.effective_sharing(); }

bool scheme_follows_layer_sharing(const config::ModelConfig& c) {
  return effective_sharing(c) == config::PositionSharing::kPerModule;
}

std::vector<std::string> relative_scheme_names() {
  std::vector<std::string> names;
  for (const auto& e : kSchemes) names.emplace_back(e.name);
  return names;
}

SchemeModules make_relative_schemes(const std::string& name, const config::ModelConfig& c, int64_t layers) {
  const Entry& entry = find_entry(name);
  SchemeModules out;
  SchemeModule first = entry.make(c);
  if (!first) return out;  // none
  out.push_back(first);
  if (first->parameter_count() == 0) return out;  // nothing to share: one module serves every layer
  int64_t count = 1;
  switch (effective_sharing(c)) {
    case config::PositionSharing::kPerLayer: count = layers; break;
    case config::PositionSharing::kPerModule: count = c.num_hidden_groups * c.inner_group_num; break;
    case config::PositionSharing::kModel: count = 1; break;
  }
  for (int64_t i = 1; i < count; ++i) out.push_back(entry.make(c));
  return out;
}

SchemeModules make_configured_schemes(const config::ModelConfig& c) {
  return make_relative_schemes(c.position.relative, c, c.num_hidden_layers * c.inner_group_num);
}

std::string describe_position(const config::ModelConfig& c) {
  std::vector<std::string> parts;
  if (c.position.absolute) parts.push_back("absolute (P=" + std::to_string(c.max_position_embeddings) + ")");
  auto modules = inspect_schemes(c);
  if (!modules.empty()) {
    std::string detail = modules[0]->describe();
    if (modules[0]->parameter_count() > 0)
      detail += std::string(detail.empty() ? "" : ", ") + sharing_words(effective_sharing(c));
    parts.push_back(c.position.relative + (detail.empty() ? "" : " (" + detail + ")"));
  }
  if (parts.empty()) return "none";
  std::string out = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) out += " + " + parts[i];
  return out;
}

int64_t scheme_parameter_count(const config::ModelConfig& c) {
  int64_t n = c.position.absolute ? c.max_position_embeddings * c.embedding_size : 0;
  for (const auto& m : inspect_schemes(c)) n += m->parameter_count();
  return n;
}

double scheme_flops(const config::ModelConfig& c, int64_t batch, int64_t length) {
  auto modules = inspect_schemes(c);
  if (modules.empty()) return 0.0;
  // Every layer application runs its module's hooks; a shared module's once-per-forward terms are
  // counted per application (an upper bound).
  return static_cast<double>(c.num_hidden_layers * c.inner_group_num) * modules[0]->flops(batch, length);
}

}  // namespace tisa::model
