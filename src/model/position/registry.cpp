// The explicit table of relative position schemes; see registry.h.
#include "model/position/registry.h"

#include "common/error.h"
#include "model/position/shaw.h"
#include "model/position/tisa.h"

namespace tisa::model {
namespace {

struct Entry {
  const char* name;
  SchemeFactory make;
};
// One line per scheme.
const Entry kSchemes[] = {
    {"none", make_none_schemes},
    {"shaw", make_shaw_schemes},
    {"tisa", make_tisa_schemes},
};

}  // namespace

SchemeModules make_shaw_schemes(const config::ModelConfig& c, int64_t layers) {
  const auto& s = c.position.shaw;
  SchemeModules out;
  const int64_t head_size = c.hidden_size / c.num_attention_heads;
  const int64_t count = scheme_follows_layer_sharing(c) ? c.num_hidden_groups * c.inner_group_num
                        : s.per_layer                    ? layers
                                                         : 1;
  for (int64_t i = 0; i < count; ++i)
    out.push_back(std::make_shared<ShawImpl>(s.max_distance, head_size, s.values, c.initializer_range));
  return out;
}

SchemeModules make_tisa_schemes(const config::ModelConfig& c, int64_t layers) {
  const auto& t = c.position.tisa;
  TisaInit init{t.init_offset_std, t.init_amplitude_mean, t.init_amplitude_std, t.init_sharpness_mean,
                t.init_sharpness_std};
  SchemeModules out;
  for (int64_t i = 0; i < (t.per_layer ? layers : 1); ++i)
    out.push_back(std::make_shared<TisaImpl>(c.num_attention_heads, t.kernels, init));
  return out;
}

bool scheme_follows_layer_sharing(const config::ModelConfig& c) {
  return c.position.relative == config::RelativeScheme::kShaw && c.position.shaw.per_attention_module;
}

std::string relative_scheme_name(config::RelativeScheme scheme) {
  for (const auto& [name, value] : config::kRelativeSchemeNames)
    if (value == scheme) return name;
  return "?";
}

std::vector<std::string> relative_scheme_names() {
  std::vector<std::string> names;
  for (const auto& e : kSchemes) names.emplace_back(e.name);
  return names;
}

SchemeModules make_relative_schemes(const std::string& name, const config::ModelConfig& config, int64_t layers) {
  for (const auto& e : kSchemes)
    if (name == e.name) return e.make(config, layers);
  std::string known;
  for (const auto& e : kSchemes) known += std::string(known.empty() ? "" : ", ") + e.name;
  throw Error("unknown relative position scheme '" + name + "' (known: " + known + ")");
}

}  // namespace tisa::model
