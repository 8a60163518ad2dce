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
//   TISA     albert.encoder.tisa.<layer>.{offsets,amplitudes,sharpness}   [S, H] each
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
#include <map>
#include <regex>

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

// TISA part: kernels per layer, their curves and bias matrices.
json analyze_tisa(const Checkpoint& c, int64_t positions, const std::string& out, bool pictures) {
  static const std::regex kName(R"(^(.*\.)?encoder\.tisa\.(\d+)\.offsets$)");
  std::map<int64_t, std::string> layers;  // layer → name prefix
  for (const auto& [name, t] : c.tensors) {
    std::smatch m;
    if (std::regex_match(name, m, kName)) layers[std::stoll(m[2])] = name.substr(0, name.size() - std::string("offsets").size());
  }
  if (layers.empty()) return nullptr;
  int64_t n = positions > 0 ? positions : c.config_int("max_position_embeddings", 512);
  std::vector<double> r;
  for (int64_t k = -(n - 1); k <= n - 1; ++k) r.push_back(static_cast<double>(k));
  at::Tensor rt = torch::tensor(r, torch::kDouble);

  json j;
  j["length"] = n;
  j["offsets_r"] = json{{"from", -(n - 1)}, {"to", n - 1}};
  j["parameter_layout"] = "[S, heads] (kernels × heads)";
  json layer_list = json::array();
  plot::Figure kernels;
  kernels.title = "TISA kernels f_h(r), r = j − i (" + std::to_string(layers.size()) + " layer module" +
                  (layers.size() > 1 ? "s" : "") + ")";
  kernels.columns = static_cast<int>(std::min<size_t>(3, layers.size()));
  kernels.panel_width = 520;
  kernels.panel_height = 340;
  at::Tensor first_bias;
  std::vector<double> first_taus;
  double min_tau = 1.0;
  for (const auto& [layer, base] : layers) {
    auto get = [&](const char* what) {
      auto it = c.tensors.find(base + what);
      if (it == c.tensors.end()) throw Error(c.dir + "/model.safetensors: tensor '" + base + what + "' not found");
      return c.checked(base + what, it->second);
    };
    at::Tensor offs = get("offsets"), amps = get("amplitudes"), sharp = get("sharpness");
    at::Tensor f = tisa_kernel(offs, amps, sharp, rt);                   // [H, 2n−1]
    at::Tensor bias = tisa_bias_matrix(offs, amps, sharp, n);            // [H, n, n]
    std::vector<double> taus;
    for (int64_t h = 0; h < bias.size(0); ++h) taus.push_back(translation_invariance(bias[h]));
    for (double t : taus) min_tau = std::min(min_tau, t);
    layer_list.push_back({{"layer", layer},
                          {"parameters", base + "{offsets,amplitudes,sharpness}"},
                          {"kernels", offs.size(0)},
                          {"heads", offs.size(1)},
                          {"offsets", to_json_matrix(offs)},
                          {"amplitudes", to_json_matrix(amps)},
                          {"sharpness", to_json_matrix(sharp)},
                          {"tau_bias_heads", taus},
                          {"f", to_json_matrix(f)}});
    if (!first_bias.defined()) first_bias = bias, first_taus = taus;
    plot::LineChart chart;
    chart.title = "layer " + std::to_string(layer);
    chart.x_label = "offset r = j − i";
    chart.y_label = "f_h(r)";
    for (int64_t h = 0; h < f.size(0); ++h)
      chart.series.push_back({"head " + std::to_string(h), r, to_vector(f[h]), "", h >= 10});
    kernels.panels.push_back(std::move(chart));
  }
  j["layers"] = layer_list;
  j["tau_bias_min"] = min_tau;
  // Kernels are usually local: draw the offsets where some |f_h(r)| reaches 1% of the largest
  // value (at least ±8, 20% margin) so that their shape is visible; the JSON keeps every offset.
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
  spdlog::info("[analysis] TISA: {} layer module(s), tau of every head's bias matrix >= {:.12f} (Toeplitz by construction)",
               layers.size(), min_tau);

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
    plot::write_svg(out + "/tisa_kernels.svg", kernels);

    // The band of a local kernel is a thin line at n = 512: show the leading block where the
    // kernels live (τ above is over all n positions).
    int64_t shown = std::min<int64_t>(n, std::max<int64_t>(32, static_cast<int64_t>(2 * reach)));
    first_bias = first_bias.narrow(1, 0, shown).narrow(2, 0, shown);
    plot::Figure bf;
    bf.title = "TISA bias f_h(j − i), layer " + std::to_string(layers.begin()->first) + ", first " +
               std::to_string(shown) + " positions (τ over n = " + std::to_string(n) + "): Toeplitz by construction";
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
    plot::write_svg(out + "/tisa_bias.svg", bf);
  }
  return j;
}

// Any other learned or fixed scheme whose term depends on j − i only (t5, alibi, kerple_log, fire
// below its threshold): the modules are built from the checkpoint's config (model/position/
// registry.h), loaded from albert.encoder.<scheme>.<i>.*, and asked for their position term per
// head against j − i (offset_profile). TISA keeps its own part above.
json analyze_scheme(const Checkpoint& c, int64_t positions, const std::string& out, bool pictures) {
  if (!c.config.contains("tisa_train")) return nullptr;
  const config::ModelConfig m = model::read_hf_config(c.dir).model;
  if (m.position.relative == "tisa") return nullptr;
  const std::string name = m.position.relative;
  auto modules = model::make_configured_schemes(m);
  if (modules.empty()) return nullptr;
  if (!modules[0]->offset_profile(2).defined())
    return json{{"scheme", name},
                {"note", name + "'s term is not a function of j − i alone (content-dependent or embedding-side): not drawn"}};
  for (size_t i = 0; i < modules.size(); ++i)
    for (auto& p : modules[i]->named_parameters()) {
      const std::string key = c.prefix + "encoder." + name + "." + std::to_string(i) + "." + p.key();
      auto it = c.tensors.find(key);
      if (it == c.tensors.end()) throw Error(c.dir + "/model.safetensors: tensor '" + key + "' not found");
      p.value().copy_(c.checked(key, it->second));
    }
  const int64_t n = positions > 0 ? positions : c.config_int("max_position_embeddings", 512);
  std::vector<double> r;
  for (int64_t k = -(n - 1); k <= n - 1; ++k) r.push_back(static_cast<double>(k));
  json j;
  j["scheme"] = name;
  j["description"] = model::describe_position(m);
  j["length"] = n;
  json list = json::array();
  plot::Figure fig;
  fig.title = name + ": position term per head against r = j − i";
  fig.columns = static_cast<int>(std::min<size_t>(3, modules.size()));
  fig.panel_width = 520;
  fig.panel_height = 340;
  for (size_t i = 0; i < modules.size(); ++i) {
    at::Tensor f = modules[i]->offset_profile(n);  // [H, 2n−1]
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
  spdlog::info("[analysis] {}: {} module(s), position term against j − i", name, modules.size());
  if (pictures) plot::write_svg(out + "/" + name + "_profile.svg", fig);
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
  result["tisa"] = analyze_tisa(c, options.positions, options.out_dir, options.pictures);
  result["scheme"] = analyze_scheme(c, options.positions, options.out_dir, options.pictures);
  const bool scheme_drawn = result["scheme"].is_object() && result["scheme"].contains("modules");
  if (!has_table && result["tisa"].is_null() && !scheme_drawn)
    throw Error(options.model_dir + "/model.safetensors: neither an absolute position table (" + c.prefix +
                "embeddings.position_embeddings.weight) nor TISA parameters (albert.encoder.tisa.<layer>.*): nothing to analyse");
  fs::write_file_atomic(options.out_dir + "/analysis.json", result.dump(1) + "\n");
  spdlog::info("[analysis] wrote {}/analysis.json{}", options.out_dir, options.pictures ? " and SVG pictures" : "");
  return result;
}

}  // namespace tisa::analysis
