// Translation-invariance analysis of a checkpoint directory (see checkpoint_analysis.h, SPEC §9).
//
// Tensor names per architecture (prefix = model_type, e.g. "albert."; a bare base model has none):
//   table    <p>embeddings.position_embeddings.weight              [P, E]
//   mapping  ALBERT  <p>encoder.embedding_hidden_mapping_in.{weight,bias}   [H, E], [H]
//            ELECTRA <p>embeddings_project.{weight,bias}  (only when E ≠ H)
//            BERT, RoBERTa: none (Wm = I, bm = 0)
//   layer 0  ALBERT  <p>encoder.albert_layer_groups.0.albert_layers.0.attention.{query,key}.*
//            others  <p>encoder.layer.0.attention.self.{query,key}.*
//   RoBERTa's table starts at row padding_idx + 1 (= pad_token_id + 1, 2 for released models):
//   rows 0..padding_idx are never used for positions and are skipped.
//   scheme   <p>encoder.<scheme>.<i>.<parameter>, the scheme named by config.json's tisa_train
//            block; its term against j − i is asked of its modules (offset_profile), never recomputed
// The head term follows SPEC §9 as written: F̂_h = (P·Wm + bm)·WQ_h · ((P·Wm + bm)·WK_h)ᵀ/√d
// with the query/key biases, and no LayerNorm, for every architecture, although all four models
// apply LayerNorm to (word + position + type) embeddings before the mapping/first layer. The
// measure is therefore of the position table as a bilinear form of layer 0, not of the exact
// logits the model computes.
#include "analysis/checkpoint_analysis.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "analysis/invariance.h"
#include "common/error.h"
#include "common/fs.h"
#include "model/hf_checkpoint.h"
#include "model/position/registry.h"
#include "model/weight_check.h"
#include "model/tensor_io.h"
#include "plot/svg.h"

namespace tisa::analysis {
namespace {

using nlohmann::json;

struct Checkpoint {
  std::string dir;
  json config;
  std::string model_type;   // albert | bert | roberta | electra
  std::string prefix;       // "albert." or "" for a bare base model
  model::TensorMap tensors;

  const at::Tensor* find(const std::string& name) const {
    auto it = tensors.find(prefix + name);
    if (it != tensors.end()) return &it->second;
    it = tensors.find(name);
    return it != tensors.end() ? &it->second : nullptr;
  }
  at::Tensor get(const std::string& name) const {
    const at::Tensor* t = find(name);
    if (!t) throw Error(dir + "/model.safetensors: tensor '" + prefix + name + "' not found (needed by the analysis)");
    return checked(name, *t);
  }
  at::Tensor get_optional(const std::string& name) const {
    const at::Tensor* t = find(name);
    return t ? checked(name, *t) : at::Tensor();
  }
  // Every tensor the analysis reads is a usable weight (model/weight_check.h): a NaN table would
  // otherwise be reported as perfectly translation invariant.
  const at::Tensor& checked(const std::string& name, const at::Tensor& t) const {
    model::require_floating_weight(t, name, dir + "/model.safetensors");
    model::require_finite(t, name, dir + "/model.safetensors");
    return t;
  }
  int64_t config_int(const char* key, int64_t fallback) const {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) return fallback;
    if (!it->is_number_integer()) throw Error(dir + "/config.json: '" + key + "' must be an integer");
    return it->get<int64_t>();
  }
};

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

Checkpoint load_checkpoint(const std::string& dir) {
  Checkpoint c;
  c.dir = dir;
  std::string config_path = dir + "/config.json";
  try {
    c.config = json::parse(fs::read_file(config_path));
  } catch (const json::exception& e) {
    throw Error(config_path + ": not valid JSON: " + e.what());
  }
  if (!c.config.is_object()) throw Error(config_path + ": expected a JSON object");
  c.tensors = model::load_tensor_file(dir + "/model.safetensors").tensors;

  static const char* kKnown[] = {"albert", "bert", "roberta", "electra"};
  if (auto it = c.config.find("model_type"); it != c.config.end() && it->is_string()) c.model_type = *it;
  if (c.model_type.empty()) {  // infer from the names
    for (const char* type : kKnown)
      for (const auto& [name, t] : c.tensors)
        if (starts_with(name, std::string(type) + ".")) c.model_type = type;
  }
  if (c.model_type == "xlm-roberta" || c.model_type == "camembert") c.model_type = "roberta";
  if (c.model_type == "tisa_albert") c.model_type = "albert";  // our remote-code export (HF ALBERT names)
  if (std::find(std::begin(kKnown), std::end(kKnown), c.model_type) == std::end(kKnown))
    throw Error(config_path + ": model_type '" + c.model_type +
                "' is not supported by the analysis (expected albert, bert, roberta or electra)");
  c.prefix = c.model_type + ".";
  bool prefixed = std::any_of(c.tensors.begin(), c.tensors.end(),
                              [&](const auto& kv) { return starts_with(kv.first, c.prefix); });
  if (!prefixed) c.prefix.clear();
  return c;
}

std::vector<double> to_vector(const at::Tensor& t) {
  at::Tensor x = t.detach().to(torch::kDouble).contiguous().cpu().reshape({-1});
  return std::vector<double>(x.data_ptr<double>(), x.data_ptr<double>() + x.numel());
}

json to_json_matrix(const at::Tensor& t) {  // [R, C] → [[...], ...]
  json rows = json::array();
  for (int64_t i = 0; i < t.size(0); ++i) rows.push_back(to_vector(t[i]));
  return rows;
}

std::string fmt(double v, int digits = 4) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

plot::Heatmap heatmap_of(const at::Tensor& m, const std::string& title, int64_t first = 0) {
  plot::Heatmap h;
  h.title = title;
  h.rows = m.size(0);
  h.cols = m.size(1);
  h.values = to_vector(m);
  h.x_first = h.y_first = static_cast<double>(first);
  h.x_label = "position j";
  h.y_label = "position i";
  h.colormap = plot::Colormap::kDiverging;  // signed quantities: white = 0 in every panel
  return h;
}

// Absolute-position part: Gram matrix and first-layer heads.
json analyze_absolute(const Checkpoint& c, int64_t positions, const std::string& out, bool pictures) {
  at::Tensor table = c.get("embeddings.position_embeddings.weight");
  int64_t skip = 0;
  if (c.model_type == "roberta") skip = c.config_int("pad_token_id", 1) + 1;
  if (table.dim() != 2 || table.size(0) <= skip)
    throw Error(c.dir + "/model.safetensors: position table has shape with " + std::to_string(table.size(0)) +
                " rows; expected [P, E] with more than " + std::to_string(skip) + " rows");
  at::Tensor p = table.narrow(0, skip, table.size(0) - skip);  // [P − skip, E]
  int64_t n = positions > 0 ? positions : p.size(0);
  if (n > p.size(0))
    throw Error("--positions " + std::to_string(n) + ": the position table of " + c.dir + " has only " +
                std::to_string(p.size(0)) + " usable rows");

  std::string mapping_name;
  at::Tensor wm, bm;
  if (c.model_type == "albert") mapping_name = "encoder.embedding_hidden_mapping_in";
  if (c.model_type == "electra" && c.find("embeddings_project.weight")) mapping_name = "embeddings_project";
  if (!mapping_name.empty()) {
    wm = c.get(mapping_name + ".weight");
    bm = c.get_optional(mapping_name + ".bias");
  }
  std::string layer = c.model_type == "albert" ? "encoder.albert_layer_groups.0.albert_layers.0.attention."
                                               : "encoder.layer.0.attention.self.";
  at::Tensor wq = c.get(layer + "query.weight"), bq = c.get_optional(layer + "query.bias");
  at::Tensor wk = c.get(layer + "key.weight"), bk = c.get_optional(layer + "key.bias");
  int64_t heads = c.config_int("num_attention_heads", 0);
  if (heads <= 0) throw Error(c.dir + "/config.json: 'num_attention_heads' missing or not positive");

  at::Tensor gram = position_gram(p, n);                                                 // [n, n]
  at::Tensor logits = head_position_logits(p, wm, bm, wq, bq, wk, bk, heads, n);        // [heads, n, n]
  InvarianceSummary s = position_invariance(p, wm, bm, wq, bq, wk, bk, heads, n);
  at::Tensor gram_profile = diagonal_means(gram);                                        // [2n−1]
  at::Tensor head_profiles = diagonal_means(logits);                                     // [heads, 2n−1]
  spdlog::info("[analysis] {}: tau(P·Pᵀ) = {:.4f}, first-layer heads: mean tau = {:.4f} (n = {})", c.model_type,
               s.tau_gram, s.tau_heads_mean, n);

  json j;
  j["position_table"] = c.prefix + "embeddings.position_embeddings.weight";
  j["table_rows"] = table.size(0);
  j["rows_skipped"] = skip;
  j["embedding_size"] = p.size(1);
  j["positions"] = n;
  j["mapping"] = mapping_name.empty() ? json(nullptr) : json(c.prefix + mapping_name);
  j["first_layer"] = c.prefix + layer + "{query,key}";
  j["heads"] = heads;
  j["head_size"] = wq.size(0) / heads;
  j["layer_norm"] = "not applied: F = (P·Wm + bm)·WQ_h·((P·Wm + bm)·WK_h)^T/sqrt(d) as SPEC §9 writes it";
  j["tau_gram"] = s.tau_gram;
  j["tau_heads"] = s.tau_heads;
  j["tau_heads_mean"] = s.tau_heads_mean;
  j["offsets"] = json{{"from", -(n - 1)}, {"to", n - 1}};
  j["gram_diagonal_means"] = to_vector(gram_profile);
  j["head_diagonal_means"] = to_json_matrix(head_profiles);

  if (pictures) {
    std::string what = c.model_type + " P·Pᵀ, first " + std::to_string(n) + " positions";
    plot::Heatmap g = heatmap_of(gram, what + ": τ = " + fmt(s.tau_gram));
    g.colorbar_label = "<p_i, p_j>";
    plot::write_svg(out + "/gram.svg", g);

    plot::Figure split;
    split.title = what + ": A = T(A) + residual, τ = " + fmt(s.tau_gram);
    split.columns = 3;
    split.panel_width = 460;
    split.panel_height = 420;
    at::Tensor toeplitz = toeplitz_projection(gram);
    split.panels.push_back(heatmap_of(gram, "A = P·Pᵀ"));
    split.panels.push_back(heatmap_of(toeplitz, "T(A): diagonal means"));
    split.panels.push_back(heatmap_of(gram - toeplitz, "A − T(A)"));
    plot::write_svg(out + "/gram_toeplitz.svg", split);

    plot::Figure hf;
    hf.title = c.model_type + " first-layer position-to-position logits F̂_h (n = " + std::to_string(n) +
               "), mean τ = " + fmt(s.tau_heads_mean);
    hf.columns = static_cast<int>(std::min<int64_t>(4, heads));
    hf.panel_width = 330;
    hf.panel_height = 300;
    for (int64_t h = 0; h < heads; ++h) {
      plot::Heatmap hm = heatmap_of(logits[h], "head " + std::to_string(h) + ": τ = " + fmt(s.tau_heads[h]));
      hm.max_cells = 256;
      hm.x_label = "j";
      hm.y_label = "i";
      hf.panels.push_back(std::move(hm));
    }
    plot::write_svg(out + "/heads.svg", hf);

    std::vector<double> r;
    for (int64_t k = -(n - 1); k <= n - 1; ++k) r.push_back(static_cast<double>(k));
    plot::Figure prof;
    prof.title = c.model_type + ": diagonal means (effective offset kernels) of the position terms";
    prof.columns = 2;
    prof.panel_width = 560;
    prof.panel_height = 380;
    plot::LineChart gc;
    gc.title = "P·Pᵀ";
    gc.x_label = "offset j − i";
    gc.y_label = "mean of diagonal";
    gc.series.push_back({"P·Pᵀ", r, to_vector(gram_profile), "", false});
    gc.legend = false;
    plot::LineChart hc;
    hc.title = "first-layer heads F̂_h";
    hc.x_label = "offset j − i";
    hc.y_label = "mean of diagonal";
    for (int64_t h = 0; h < heads; ++h)
      hc.series.push_back({"head " + std::to_string(h), r, to_vector(head_profiles[h]), "", h >= 10});
    prof.panels.push_back(gc);
    prof.panels.push_back(hc);
    plot::write_svg(out + "/head_profiles.svg", prof);
  }
  return j;
}

// The configured scheme's modules as the checkpoint holds them (model/position/registry.h): module
// i's parameters are <prefix>encoder.<scheme>.<i>.<name>, and a scheme with parameters has as many
// modules as the file holds (shapes from the file too), a parameter-free one the configured count.
// Converted to float64, so that offset_profile() is computed in the analysis' precision.
struct LoadedScheme {
  std::string name;
  model::SchemeModules modules;
  std::vector<std::string> bases;  // "<prefix>encoder.<scheme>.<i>."
};

LoadedScheme load_scheme_modules(const Checkpoint& c, const config::ModelConfig& m) {
  LoadedScheme s{m.position.relative, {}, {}};
  const auto configured = model::make_configured_schemes(m);
  auto base = [&](size_t i) { return c.prefix + "encoder." + s.name + "." + std::to_string(i) + "."; };
  size_t count = configured.size();
  if (!configured.empty() && configured.front()->parameter_count() > 0) {
    const std::string first = configured.front()->named_parameters().begin()->key();
    count = 0;
    while (c.tensors.count(base(count) + first)) ++count;
    if (count == 0) throw Error(c.dir + "/model.safetensors: tensor '" + base(0) + first + "' not found");
  }
  for (size_t i = 0; i < count; ++i) {
    auto module = i < configured.size() ? configured[i] : model::make_relative_schemes(s.name, m, 1).front();
    for (auto& p : module->named_parameters()) {
      const std::string key = base(i) + p.key();
      auto it = c.tensors.find(key);
      if (it == c.tensors.end()) throw Error(c.dir + "/model.safetensors: tensor '" + key + "' not found");
      p.value().set_data(c.checked(key, it->second).clone());
    }
    module->to(torch::kDouble);
    s.modules.push_back(module);
    s.bases.push_back(base(i));
  }
  return s;
}

// The configured scheme's term against j − i, asked of its modules (offset_profile), for every
// scheme whose term depends on the offset only (tisa, t5, alibi, kerple_log, fire below its
// threshold). Per module: its parameters, f_h(r) and τ of each head's bias matrix f_h(j − i)
// (1 by construction). JSON part `<scheme>`, pictures <scheme>_kernels.svg (f_h(r) per module)
// and <scheme>_bias.svg (the first module's bias matrices). Null when there is no such term.
json analyze_offset_term(const LoadedScheme& s, int64_t n, const std::string& out, bool pictures) {
  if (s.modules.empty()) return nullptr;
  std::vector<double> r;
  for (int64_t k = -(n - 1); k <= n - 1; ++k) r.push_back(static_cast<double>(k));

  json j;
  j["length"] = n;
  j["offsets_r"] = json{{"from", -(n - 1)}, {"to", n - 1}};
  json layer_list = json::array();
  plot::Figure kernels;
  kernels.title = s.name + " position term f_h(r), r = j − i (" + std::to_string(s.modules.size()) + " layer module" +
                  (s.modules.size() > 1 ? "s" : "") + ")";
  kernels.columns = static_cast<int>(std::min<size_t>(3, s.modules.size()));
  kernels.panel_width = 520;
  kernels.panel_height = 340;
  at::Tensor first_bias;
  std::vector<double> first_taus;
  double min_tau = 1.0;
  for (size_t i = 0; i < s.modules.size(); ++i) {
    const auto& module = *s.modules[i];
    at::Tensor f = module.offset_profile(n);                              // [H, 2n−1]
    at::Tensor bias = model::toeplitz_from_offsets(f, n);                 // [H, n, n]
    std::vector<double> taus;
    for (int64_t h = 0; h < bias.size(0); ++h) taus.push_back(translation_invariance(bias[h]));
    for (double t : taus) min_tau = std::min(min_tau, t);
    json entry = {{"layer", i}, {"description", module.describe()}, {"heads", f.size(0)}};
    std::string names;
    for (const auto& p : module.named_parameters()) {
      names += (names.empty() ? "" : ",") + p.key();
      entry[p.key()] = p.value().dim() == 2 ? to_json_matrix(p.value()) : json(to_vector(p.value()));
    }
    if (!names.empty()) entry["parameters"] = s.bases[i] + "{" + names + "}";
    entry["tau_bias_heads"] = taus;
    entry["f"] = to_json_matrix(f);
    layer_list.push_back(std::move(entry));
    if (!first_bias.defined()) first_bias = bias, first_taus = taus;
    plot::LineChart chart;
    chart.title = "layer " + std::to_string(i);
    chart.x_label = "offset r = j − i";
    chart.y_label = "f_h(r)";
    for (int64_t h = 0; h < f.size(0); ++h)
      chart.series.push_back({"head " + std::to_string(h), r, to_vector(f[h]), "", h >= 10});
    kernels.panels.push_back(std::move(chart));
  }
  j["layers"] = layer_list;
  j["tau_bias_min"] = min_tau;
  // Terms are often local: draw the offsets where some |f_h(r)| reaches 1% of the largest value
  // (at least ±8, 20% margin) so that their shape is visible; the JSON keeps every offset.
  double peak = 0, reach = 8;
  for (const auto& l : layer_list)
    for (const auto& head : l.at("f"))
      for (const auto& v : head) peak = std::max(peak, std::abs(v.get<double>()));
  for (const auto& l : layer_list)
    for (const auto& head : l.at("f"))
      for (size_t k = 0; k < head.size(); ++k)
        if (std::abs(head[k].get<double>()) >= 0.01 * peak) reach = std::max(reach, std::abs(r[k]));
  reach = std::min(static_cast<double>(n - 1), std::ceil(reach * 1.2));
  j["plotted_offsets"] = json{{"from", -reach}, {"to", reach}};
  spdlog::info("[analysis] {}: {} layer module(s), tau of every head's bias matrix >= {:.12f} (Toeplitz by construction)",
               s.name, s.modules.size(), min_tau);

  if (pictures) {
    // Legend shared by all panels (same heads in each).
    const auto& first = std::get<plot::LineChart>(kernels.panels.front());
    for (size_t h = 0; h < first.series.size(); ++h) kernels.legend.push_back({first.series[h].name, plot::palette_color(h), h >= 10});
    for (auto& p : kernels.panels) {
      auto& chart = std::get<plot::LineChart>(p);
      chart.legend = false;
      chart.x_min = -reach;
      chart.x_max = reach;
    }
    plot::write_svg(out + "/" + s.name + "_kernels.svg", kernels);

    // The band of a local term is a thin line at n = 512: show the leading block where it lives
    // (τ above is over all n positions).
    int64_t shown = std::min<int64_t>(n, std::max<int64_t>(32, static_cast<int64_t>(2 * reach)));
    first_bias = first_bias.narrow(1, 0, shown).narrow(2, 0, shown);
    plot::Figure bf;
    bf.title = s.name + " bias f_h(j − i), layer 0, first " + std::to_string(shown) + " positions (τ over n = " +
               std::to_string(n) + "): Toeplitz by construction";
    bf.columns = static_cast<int>(std::min<int64_t>(4, first_bias.size(0)));
    bf.panel_width = 330;
    bf.panel_height = 300;
    for (int64_t h = 0; h < first_bias.size(0); ++h) {
      plot::Heatmap hm = heatmap_of(first_bias[h], "head " + std::to_string(h) + ": τ = " + fmt(first_taus[h], 6));
      hm.max_cells = 256;
      hm.x_label = "j";
      hm.y_label = "i";
      bf.panels.push_back(std::move(hm));
    }
    plot::write_svg(out + "/" + s.name + "_bias.svg", bf);
  }
  return j;
}

// The scheme's summary (part "scheme"): its description and each module's term against j − i
// over every offset, drawn unzoomed in <scheme>_profile.svg; a scheme whose term is not a
// function of j − i alone is named with a note.
json describe_scheme(const LoadedScheme& s, const config::ModelConfig& m, int64_t n, const std::string& out,
                     bool pictures) {
  if (s.modules.empty())
    return json{{"scheme", s.name},
                {"note", s.name + "'s term is not a function of j − i alone (content-dependent or embedding-side): not drawn"}};
  std::vector<double> r;
  for (int64_t k = -(n - 1); k <= n - 1; ++k) r.push_back(static_cast<double>(k));
  json j;
  j["scheme"] = s.name;
  j["description"] = model::describe_position(m);
  j["length"] = n;
  json list = json::array();
  plot::Figure fig;
  fig.title = s.name + ": position term per head against r = j − i";
  fig.columns = static_cast<int>(std::min<size_t>(3, s.modules.size()));
  fig.panel_width = 520;
  fig.panel_height = 340;
  for (size_t i = 0; i < s.modules.size(); ++i) {
    at::Tensor f = s.modules[i]->offset_profile(n);  // [H, 2n−1]
    list.push_back({{"module", i}, {"f", to_json_matrix(f)}});
    plot::LineChart chart;
    chart.title = "module " + std::to_string(i);
    chart.x_label = "offset r = j − i";
    chart.y_label = "bias";
    for (int64_t h = 0; h < f.size(0); ++h)
      chart.series.push_back({"head " + std::to_string(h), r, to_vector(f[h]), "", h >= 10});
    fig.panels.push_back(std::move(chart));
  }
  j["modules"] = list;
  if (pictures) plot::write_svg(out + "/" + s.name + "_profile.svg", fig);
  return j;
}

}  // namespace

json analyze_checkpoint(const AnalyzeOptions& options) {
  if (options.positions < 0) throw Error("--positions must be positive (0 = all rows), got " + std::to_string(options.positions));
  torch::NoGradGuard no_grad;
  Checkpoint c = load_checkpoint(options.model_dir);
  fs::create_directories(options.out_dir);
  json result;
  result["model_dir"] = options.model_dir;
  result["model_type"] = c.model_type;
  result["tau_definition"] = "tau(A) = 1 - ||A - T(A)||_F^2 / ||A - mean(A)||_F^2, T = Toeplitz projection (SPEC §9)";
  if (auto it = c.config.find("tisa_train"); it != c.config.end()) result["tisa_train"] = *it;

  bool has_table = c.find("embeddings.position_embeddings.weight") != nullptr;
  result["absolute"] = has_table ? analyze_absolute(c, options.positions, options.out_dir, options.pictures) : json(nullptr);
  result["scheme"] = nullptr;
  // The relative scheme: the tisa_train block's or, in an export without one, the scheme whose
  // module 0 the file holds (registry naming, model/position/registry.h).
  bool term_drawn = false;
  if (c.model_type == "albert") {  // schemes exist in tisa-train's ALBERT only
    config::ModelConfig m = model::read_hf_config(c.dir).model;
    if (!c.config.contains("tisa_train"))
      for (const auto& name : model::relative_scheme_names()) {
        const auto probe = model::make_relative_schemes(name, m, 1);
        if (!probe.empty() && probe.front()->parameter_count() > 0 &&
            c.tensors.count(c.prefix + "encoder." + name + ".0." + probe.front()->named_parameters().begin()->key()))
          m.position.relative = name;
      }
    const auto configured = model::make_configured_schemes(m);
    if (!configured.empty()) {
      LoadedScheme s{m.position.relative, {}, {}};
      if (configured.front()->offset_profile(2).defined()) s = load_scheme_modules(c, m);
      const int64_t n = options.positions > 0 ? options.positions : c.config_int("max_position_embeddings", 512);
      result[s.name] = analyze_offset_term(s, n, options.out_dir, options.pictures);
      result["scheme"] = describe_scheme(s, m, n, options.out_dir, options.pictures);
      term_drawn = !s.modules.empty();
    }
  }
  if (!has_table && !term_drawn)
    throw Error(options.model_dir + "/model.safetensors: neither an absolute position table (" + c.prefix +
                "embeddings.position_embeddings.weight) nor a position scheme whose term depends on j − i only "
                "(<prefix>encoder.<scheme>.<i>.*): nothing to analyse");
  fs::write_file_atomic(options.out_dir + "/analysis.json", result.dump(1) + "\n");
  spdlog::info("[analysis] wrote {}/analysis.json{}", options.out_dir, options.pictures ? " and SVG pictures" : "");
  return result;
}

}  // namespace tisa::analysis
