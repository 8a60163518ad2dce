// The paper reproduction's results table; see paper_report.h.
#include "report/paper_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/error.h"
#include "common/fs.h"
#include "config/config_loader.h"
#include "config/position_variant.h"
#include "data/glue_tsv.h"
#include "glue/glue_eval.h"
#include "metrics/glue_metrics.h"
#include "metrics/significance.h"
#include "plot/run_plots.h"
#include "plot/svg.h"
#include "report/gzip_file.h"
#include "model/albert.h"
#include "model/hf_checkpoint.h"
#include "model/position/registry.h"

namespace tisa::report {
namespace stdfs = std::filesystem;
using nlohmann::json;

namespace {

// PATH, or its gzip-compressed copy PATH.gz (an archived reproduction, scripts/archive_reproduction.sh).
bool json_file_exists(const std::string& path) { return fs::exists(path) || fs::exists(path + ".gz"); }

json read_json_file(const std::string& path) {
  const bool compressed = !fs::exists(path) && fs::exists(path + ".gz");
  const std::string shown = compressed ? path + ".gz" : path;
  try {
    return json::parse(compressed ? read_gzip_file(shown) : fs::read_file(path));
  } catch (const json::exception& e) {
    throw Error(shown + ": not valid JSON (" + e.what() + ")");
  }
}

std::vector<std::string> discover_variants(const std::string& dir) {
  std::vector<std::string> found;
  const stdfs::path root = stdfs::path(dir) / "pretrain";
  if (stdfs::is_directory(root))
    for (const auto& e : stdfs::directory_iterator(root))
      if (e.is_directory()) found.push_back(e.path().filename().string());
  // The registry's order (config/position_variant.h): absolute first, pretraining draws V@K after V.
  std::sort(found.begin(), found.end(), [](const std::string& a, const std::string& b) {
    const std::string base_a = a.substr(0, a.find('@')), base_b = b.substr(0, b.find('@'));
    const auto ka = config::position_variant_order(base_a), kb = config::position_variant_order(base_b);
    return ka != kb ? ka < kb : a < b;
  });
  return found;
}

// "absolute (P=512) + tisa (S=5, per layer)" etc.: asked of the schemes (model/position/registry.h).
std::string describe_position(const config::ModelConfig& m) { return model::describe_position(m); }

// The model config of a variant: the final model's config.json, else the run's config.yaml.
bool variant_model_config(const std::string& run_dir, config::ModelConfig& out, std::string& source) {
  const std::string final_dir = run_dir + "/final";
  if (fs::exists(final_dir + "/config.json")) {
    out = model::read_hf_config(final_dir).model;
    source = final_dir + "/config.json";
    return true;
  }
  if (fs::exists(run_dir + "/config.yaml")) {
    out = config::load_config(run_dir + "/config.yaml").model;
    source = run_dir + "/config.yaml";
    return true;
  }
  return false;
}

// The "eval" events of a metrics.jsonl, in order (malformed lines, e.g. a line cut by a crash,
// are skipped).
std::vector<json> eval_events(const std::string& path) {
  std::vector<json> events;
  if (!fs::exists(path)) return events;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.value("event", "") == "eval") events.push_back(std::move(j));
  }
  return events;
}

json stats_json(const std::vector<double>& values, const std::vector<int64_t>& seeds) {
  const SeedStats s = seed_stats(values);
  json out = {{"median", s.median}, {"std", s.std}, {"mean", s.mean}, {"n", s.n}, {"values", values}, {"seeds", seeds}};
  const auto ci = metrics::mean_interval_95(values);
  out["ci95"] = std::isfinite(ci.half_width) ? json(ci.half_width) : json();  // null: one seed, no interval
  return out;
}

// One task's results.json → {"main_metric", "median", "std", "mean", "n", "values", "seeds"}.
json task_summary(const std::string& path) {
  const json r = read_json_file(path);
  const std::string metric = r.value("main_metric", "");
  if (metric.empty() || !r.contains("runs") || !r["runs"].is_array())
    throw Error(path + ": expected `main_metric` and `runs` (a results.json of `tisa-train glue`)");
  std::vector<double> values;
  std::vector<int64_t> seeds;
  for (const auto& run : r["runs"]) {
    if (!run.contains("metrics") || !run["metrics"].contains(metric)) continue;
    values.push_back(run["metrics"][metric].get<double>());
    seeds.push_back(run.value("seed", static_cast<int64_t>(seeds.size())));
  }
  if (values.empty()) return json();
  json out = stats_json(values, seeds);
  out["main_metric"] = metric;
  return out;
}

// Per seed, the mean over tasks of the main metric; only seeds that every task has.
json glue_average(const json& glue) {
  if (glue.empty()) return json();
  std::map<int64_t, std::vector<double>> by_seed;
  for (auto it = glue.begin(); it != glue.end(); ++it) {
    const auto& seeds = it.value()["seeds"];
    const auto& values = it.value()["values"];
    for (size_t i = 0; i < seeds.size(); ++i) by_seed[seeds[i].get<int64_t>()].push_back(values[i].get<double>());
  }
  std::vector<double> values;
  std::vector<int64_t> seeds;
  for (const auto& [seed, v] : by_seed) {
    if (v.size() != glue.size()) continue;
    double sum = 0;
    for (double x : v) sum += x;
    values.push_back(sum / static_cast<double>(v.size()));
    seeds.push_back(seed);
  }
  if (values.empty()) return json();
  json out = stats_json(values, seeds);
  out["tasks"] = static_cast<int64_t>(glue.size());
  return out;
}

bool is_glue_task_name(const std::string& name) {
  for (const auto& t : data::glue_tasks())
    if (t.name == name) return true;
  return false;
}

json collect_variant(const std::string& dir, const std::string& name, std::set<std::string>& tasks) {
  json v = {{"name", name}};
  json incomplete = json::array();  // what of this variant is missing or unfinished, by path under dir
  const std::string run_dir = (stdfs::path(dir) / "pretrain" / name).string();
  config::ModelConfig m;
  std::string source;
  if (variant_model_config(run_dir, m, source)) {
    v["position"] = describe_position(m);
    v["positional_parameters"] = model::positional_parameter_count(m);
    // Relative to the reproduction folder: results.json names no machine's paths.
    v["model_config_source"] = stdfs::path(source).lexically_relative(dir).generic_string();
    // An archived reproduction keeps the model's SHA-256 in place of its weights.
    v["pretrained"] = fs::exists(run_dir + "/final/model.safetensors") ||
                      fs::exists(run_dir + "/final/model.safetensors.sha256");
  }
  if (!stdfs::is_directory(run_dir)) incomplete.push_back("pretrain/" + name + " is missing");
  else if (!v.value("pretrained", false)) incomplete.push_back("pretrain/" + name + " has no final model (unfinished)");
  const std::vector<json> evals = eval_events(run_dir + "/metrics.jsonl");
  if (!evals.empty()) {
    const json& ev = evals.back();
    json p;
    for (const char* key : {"step", "mlm_loss", "mlm_accuracy", "sop_loss", "sop_accuracy", "tau_gram", "tau_heads_mean"})
      if (ev.contains(key)) p[key] = ev[key];
    v["pretrain_eval"] = p;
    // τ at the first evaluation that has it (absolute tables only), so the table shows whether
    // invariance grew during pretraining (SPEC §9).
    for (const json& e : evals)
      if (e.contains("tau_gram")) {
        v["pretrain_tau_first"] = {{"step", e["step"]}, {"tau_gram", e["tau_gram"]},
                                   {"tau_heads_mean", e.value("tau_heads_mean", json())}};
        break;
      }
  }
  json glue = json::object();
  const stdfs::path glue_dir = stdfs::path(dir) / "glue" / name;
  if (stdfs::is_directory(glue_dir))
    for (const auto& e : stdfs::directory_iterator(glue_dir)) {
      const auto results = e.path() / "results.json";
      // Task folders only: the run folder also holds the glue command's own outputs (leaderboard/).
      if (!e.is_directory() || !is_glue_task_name(e.path().filename().string())) continue;
      const std::string where = "glue/" + name + "/" + e.path().filename().string();
      if (!stdfs::is_regular_file(results)) {
        incomplete.push_back(where + " has no results.json (unfinished)");
        continue;
      }
      json t = task_summary(results.string());
      if (t.is_null()) {
        incomplete.push_back(where + "/results.json has no run with its main metric");
        continue;
      }
      // The paired tests and baselines need every seed's dev predictions: a seed without them is a gap.
      for (const auto& seed : t["seeds"]) {
        const std::string seed_dir = where + "/seed-" + std::to_string(seed.get<int64_t>());
        if (!json_file_exists((stdfs::path(dir) / seed_dir / glue::kDevPredictionsFile).string()))
          incomplete.push_back(seed_dir + " has no " + std::string(glue::kDevPredictionsFile));
      }
      glue[e.path().filename().string()] = t;
      tasks.insert(e.path().filename().string());
    }
  v["glue"] = glue;
  const json avg = glue_average(glue);
  if (!avg.is_null()) v["glue_average"] = avg;
  const std::string length_file = (stdfs::path(dir) / "length" / (name + ".json")).string();
  if (fs::exists(length_file)) {
    const json length = read_json_file(length_file);
    v["length"] = length.value("lengths", json::array());
    // How the evaluation masked (eval-mlm: the model's pretraining settings unless flags changed them).
    json masking = json::object();
    for (const char* key : {"masked_lm_prob", "max_ngram", "masking_from"})
      if (length.contains(key)) masking[key] = length[key];
    v["length_masking"] = masking;
  }
  v["incomplete"] = incomplete;
  return v;
}

std::string fmt(const char* format, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

std::string with_thousands(int64_t n) {
  std::string s = std::to_string(n < 0 ? -n : n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return n < 0 ? "-" + s : s;
}

// "72.3 ± 1.2" (mean ± 95 % CI half-width, ×100), "72.3" for one seed, or "—".
std::string stats_cell(const json& s) {
  if (!s.is_object() || !s.contains("mean")) return "—";
  const std::string mean = fmt("%.1f", 100 * s["mean"].get<double>());
  if (!s.contains("ci95") || !s["ci95"].is_number()) return mean;
  return mean + " ± " + fmt("%.1f", 100 * s["ci95"].get<double>());
}

// The lengths of the first variant that has length rows (all variants use the same ones).
std::vector<int64_t> length_columns(const json& variants) {
  std::vector<int64_t> lengths;
  for (const auto& v : variants) {
    if (!v.contains("length")) continue;
    for (const auto& r : v["length"]) lengths.push_back(r["seq_length"].get<int64_t>());
    break;
  }
  return lengths;
}

const json* length_row(const json& v, int64_t length) {
  if (!v.contains("length")) return nullptr;
  for (const auto& r : v["length"])
    if (r["seq_length"].get<int64_t>() == length) return &r;
  return nullptr;
}

// How the length evaluation masked, from the eval-mlm files: one clause when every variant used
// the same settings, else the settings per variant.
std::string length_masking_clause(const json& variants) {
  std::map<std::string, std::vector<std::string>> by_setting;
  for (const auto& v : variants) {
    if (!v.contains("length_masking")) continue;
    const json& m = v["length_masking"];
    std::string setting = "masking not recorded";
    if (m.contains("masked_lm_prob") && m.contains("max_ngram")) {
      const std::string from = m.value("masking_from", "");
      const int64_t n = m["max_ngram"].get<int64_t>();
      setting = fmt("%g", 100 * m["masked_lm_prob"].get<double>()) + " % of tokens masked, " +
                (n == 1 ? std::string("single words") : "n-grams of up to " + std::to_string(n) + " words") +
                (from == "model" ? ", as in pretraining" : from.empty() ? "" : " (masking from " + from + ")");
    }
    by_setting[setting].push_back(v["name"].get<std::string>());
  }
  if (by_setting.empty()) return "";
  if (by_setting.size() == 1) return "; " + by_setting.begin()->first;
  std::string out;
  for (const auto& [setting, names] : by_setting) {
    out += "; " + setting + ":";
    for (const auto& n : names) out += " " + n;
  }
  return out;
}

std::string length_header(const std::vector<int64_t>& lengths, size_t i) {
  std::string h = "L=" + std::to_string(lengths[i]);
  if (lengths[0] > 0 && lengths[i] % lengths[0] == 0) h += " (" + std::to_string(lengths[i] / lengths[0]) + "×)";
  return h;
}

// ------------------------------------------------------------------ paired comparisons
// One variant's dev predictions on one task: the split holding the main metric, per seed.
struct TaskPredictions {
  std::string metrics_task, main_metric, source;
  std::vector<double> labels;
  std::map<int64_t, std::vector<double>> by_seed;
};

// Reads glue/<variant>/<task>/seed-*/dev_predictions.json (seeds named by results.json); a seed
// without the file is left out here and listed in the results' "incomplete" (collect_variant).
TaskPredictions read_task_predictions(const std::string& dir, const std::string& variant, const std::string& task,
                                      const json& summary) {
  TaskPredictions out;
  out.main_metric = summary.value("main_metric", "");
  const stdfs::path task_dir = stdfs::path(dir) / "glue" / variant / task;
  for (const auto& seed_json : summary.value("seeds", json::array())) {
    const int64_t seed = seed_json.get<int64_t>();
    const std::string path = (task_dir / ("seed-" + std::to_string(seed)) / glue::kDevPredictionsFile).string();
    if (!json_file_exists(path)) continue;
    const json file = read_json_file(path);
    const json splits = file.value("splits", json::array());  // `split` points into it below
    const json* split = nullptr;
    for (const auto& sp : splits) {
      const auto keys = sp.value("metrics", json::array());
      if (std::find(keys.begin(), keys.end(), json(out.main_metric)) != keys.end()) split = &sp;
    }
    if (!split) throw Error(path + ": no split with the main metric '" + out.main_metric + "'");
    std::vector<double> labels, predictions;
    try {
      labels = split->at("labels").get<std::vector<double>>();
      predictions = split->at("predictions").get<std::vector<double>>();
      out.metrics_task = split->at("metrics_task").get<std::string>();
    } catch (const json::exception& e) {
      throw Error(path + ": expected labels, predictions and metrics_task (" + e.what() + ")");
    }
    if (predictions.size() != labels.size())
      throw Error(path + ": " + std::to_string(predictions.size()) + " predictions for " +
                  std::to_string(labels.size()) + " labels");
    if (out.by_seed.empty()) {
      out.labels = std::move(labels);
      out.source = path;
    } else if (labels != out.labels) {
      throw Error(path + ": labels differ from " + out.source + " (another dev file?)");
    }
    out.by_seed[seed] = std::move(predictions);
  }
  return out;
}

// A variant's pretraining draw: "tisa@2" is the second pretraining of tisa (another
// training.seed, scripts/reproduce_paper.sh), "tisa" its first.
struct DrawName {
  std::string base;
  int64_t draw = 1;
};
DrawName draw_name(const std::string& name) {
  const size_t at = name.rfind('@');
  if (at == std::string::npos || at + 1 >= name.size()) return {name, 1};
  const std::string k = name.substr(at + 1);
  if (!std::all_of(k.begin(), k.end(), [](char c) { return c >= '0' && c <= '9'; }) || k.size() > 6) return {name, 1};
  return {name.substr(0, at), std::stoll(k)};
}

// Paired tests of every variant against the reference, per task; p-values Holm-adjusted over all
// comparisons in the table. Variants with several pretraining draws (name@k) are compared as one,
// draw k against the reference's draw k, by the nested bootstrap (pretrainings, fine-tuning seeds,
// examples); a single draw keeps its seeds fixed and resamples the examples.
json paired_comparisons(const std::string& dir, const json& variants, const std::vector<std::string>& tasks,
                        const std::string& reference, int64_t resamples) {
  // base name → draw → variant, in the order of first appearance.
  std::vector<std::string> order;
  std::map<std::string, std::map<int64_t, const json*>> groups;
  for (const auto& v : variants) {
    const DrawName d = draw_name(v["name"].get<std::string>());
    if (!groups.count(d.base)) order.push_back(d.base);
    groups[d.base][d.draw] = &v;
  }
  json list = json::array();
  if (!groups.count(reference)) return list;
  const auto& ref = groups[reference];
  for (const auto& task : tasks) {
    for (const auto& base : order) {
      if (base == reference) continue;
      metrics::DrawPredictions pa, pb;
      std::vector<int64_t> draws, seeds;
      std::vector<double> labels;
      std::string metrics_task, key, source;
      for (const auto& [k, bv] : groups[base]) {
        const auto rit = ref.find(k);
        if (rit == ref.end() || !(*rit->second)["glue"].contains(task) || !(*bv)["glue"].contains(task)) continue;
        const TaskPredictions a =
            read_task_predictions(dir, (*rit->second)["name"].get<std::string>(), task, (*rit->second)["glue"][task]);
        const TaskPredictions b = read_task_predictions(dir, (*bv)["name"].get<std::string>(), task, (*bv)["glue"][task]);
        if (a.by_seed.empty() || b.by_seed.empty()) continue;
        if (b.labels != a.labels)
          throw Error(b.source + ": labels differ from " + a.source + " (variants evaluated on different dev files)");
        if (!labels.empty() && a.labels != labels)
          throw Error(a.source + ": labels differ from " + source + " (pretraining draws evaluated on different dev files)");
        std::vector<std::vector<double>> da, db;
        for (const auto& [seed, p] : a.by_seed) {
          auto it = b.by_seed.find(seed);
          if (it == b.by_seed.end()) continue;
          da.push_back(p);
          db.push_back(it->second);
          if (draws.empty()) seeds.push_back(seed);  // the seeds of the first draw (the table's column)
        }
        if (da.empty()) continue;
        pa.push_back(std::move(da));
        pb.push_back(std::move(db));
        draws.push_back(k);
        labels = a.labels, metrics_task = a.metrics_task, key = a.main_metric, source = a.source;
      }
      if (pa.empty()) continue;
      auto metric = [&](const std::vector<double>& p, const std::vector<double>& l) {
        return metrics::glue_compute_metrics(metrics_task, p, l).get(key);
      };
      // Approximate randomisation swaps per example; the (draw, seed) pairs are its seeds.
      std::vector<std::vector<double>> flat_a, flat_b;
      for (size_t d = 0; d < pa.size(); ++d)
        for (size_t s = 0; s < pa[d].size(); ++s) flat_a.push_back(pa[d][s]), flat_b.push_back(pb[d][s]);
      const auto r = pa.size() > 1 ? metrics::nested_paired_bootstrap(metric, pa, pb, labels, resamples)
                                   : metrics::paired_bootstrap(metric, pa[0], pb[0], labels, resamples);
      const auto ar = metrics::approximate_randomisation(metric, flat_a, flat_b, labels, resamples);
      json c = {{"variant", base}, {"task", task}, {"metric", key}, {"seeds", seeds},
                {"examples", r.examples}, {"difference", r.difference}, {"low", r.low}, {"high", r.high},
                {"p", std::isfinite(r.p_value) ? json(r.p_value) : json()}, {"resamples", r.resamples},
                {"dropped_resamples", r.dropped},
                {"p_randomisation", std::isfinite(ar.p_value) ? json(ar.p_value) : json()},
                {"randomisation_trials", ar.trials}, {"dropped_trials", ar.dropped}};
      if (pa.size() > 1) c["pretraining_draws"] = draws;
      list.push_back(c);
    }
  }
  std::vector<double> ps;
  for (const auto& c : list) ps.push_back(c["p"].is_number() ? c["p"].get<double>() : 1.0);
  const auto adjusted = metrics::holm_adjust(ps);
  for (size_t i = 0; i < list.size(); ++i) {
    list[i]["p_holm"] = adjusted[i];
    list[i]["significant"] = list[i]["p"].is_number() && adjusted[i] <= 0.05;
  }
  return list;
}

// ------------------------------------------------------------------ baselines
// Per task, the score of always predicting the dev set's most frequent label (ties: the smallest)
// in the task's main metric — null where the metric is undefined for a constant prediction (the
// correlations of STS-B) — and, per variant, the seeds whose predictions are one class (or one
// value) for every dev example: a fine-tuning that learnt nothing.
json task_baselines_and_constant_seeds(const std::string& dir, json& variants, const std::vector<std::string>& tasks) {
  json baselines = json::object();
  for (const auto& task : tasks)
    for (auto& v : variants) {
      if (!v["glue"].contains(task)) continue;
      const TaskPredictions p = read_task_predictions(dir, v["name"].get<std::string>(), task, v["glue"][task]);
      if (p.by_seed.empty()) continue;
      json constant = json::array();
      for (const auto& [seed, predictions] : p.by_seed)
        if (std::all_of(predictions.begin(), predictions.end(), [&](double x) { return x == predictions.front(); }))
          constant.push_back(seed);
      v["glue"][task]["constant_seeds"] = constant;
      if (baselines.contains(task)) continue;
      std::map<double, int64_t> counts;
      for (double l : p.labels) ++counts[l];
      double majority = counts.begin()->first;
      for (const auto& [label, n] : counts)
        if (n > counts[majority]) majority = label;
      const double score =
          metrics::glue_compute_metrics(p.metrics_task, std::vector<double>(p.labels.size(), majority), p.labels)
              .get(p.main_metric);
      baselines[task] = {{"metric", p.main_metric}, {"majority_label", majority},
                         {"majority_share", static_cast<double>(counts[majority]) / static_cast<double>(p.labels.size())},
                         {"score", std::isfinite(score) ? json(score) : json()}, {"examples", p.labels.size()}};
    }
  return baselines;
}

std::string comparison_verdict(const json& c) {
  if (!c["significant"].get<bool>()) return "no significant difference";
  return c["difference"].get<double>() > 0 ? "better" : "worse";
}

// p-values as computed: three decimals, two significant digits below 0.001 (the resolution of
// 10,000 resamples is 2e-4, stated beside the table).
std::string p_cell(double p) {
  if (p < 0.001) return fmt("%.1e", p);
  return fmt("%.3f", p);
}

// The paper's claims (SPEC §1) beside this run's evidence for each: absolute + TISA against
// absolute and TISA against Shaw on every task (paired as the table's comparisons; the first from
// the table itself when absolute is its reference), the positional parameter counts, and τ of the
// absolute table from the first evaluation to the last. Parts whose variants are missing are absent.
json paper_claims(const std::string& dir, const json& results, const std::vector<std::string>& tasks,
                  int64_t resamples) {
  const json& variants = results["variants"];
  auto of = [&](std::initializer_list<const char*> bases) {
    json subset = json::array();
    for (const auto& v : variants) {
      const std::string base = draw_name(v["name"].get<std::string>()).base;
      for (const char* b : bases)
        if (base == b) subset.push_back(v);
    }
    return subset;
  };
  json claims = json::object();
  if (results["reference"] == "absolute") {
    json from_table = json::array();
    for (const auto& c : results["comparisons"])
      if (c["variant"] == "absolute_tisa") from_table.push_back(c);
    if (!from_table.empty()) claims["absolute_tisa_vs_absolute"] = {{"comparisons", from_table}, {"holm_over", "table"}};
  } else if (const json c = paired_comparisons(dir, of({"absolute", "absolute_tisa"}), tasks, "absolute", resamples);
             !c.empty()) {
    claims["absolute_tisa_vs_absolute"] = {{"comparisons", c}, {"holm_over", "claim"}};
  }
  if (const json c = paired_comparisons(dir, of({"shaw", "tisa"}), tasks, "shaw", resamples); !c.empty())
    claims["tisa_vs_shaw"] = {{"comparisons", c}, {"holm_over", "claim"}};
  json parameters = json::object();
  for (const auto& v : variants)
    for (const char* b : {"absolute", "absolute_tisa", "tisa", "shaw"})
      if (v["name"] == b && v.contains("positional_parameters")) parameters[b] = v["positional_parameters"];
  if (!parameters.empty()) claims["positional_parameters"] = parameters;
  for (const auto& v : variants)
    if (v["name"] == "absolute" && v.contains("pretrain_tau_first") && v.contains("pretrain_eval") &&
        v["pretrain_eval"].contains("tau_gram"))
      claims["absolute_invariance"] = {
          {"first", v["pretrain_tau_first"]},
          {"last", {{"step", v["pretrain_eval"]["step"]}, {"tau_gram", v["pretrain_eval"]["tau_gram"]}}}};
  return claims;
}

// "better on 1, worse on 0, no significant difference on 5 of 6 tasks: CoLA +1.2 [−0.5, +2.9] (p (Holm) 0.31); …"
std::string claim_evidence(const json& comparisons) {
  int better = 0, worse = 0;
  std::string rows;
  for (const auto& c : comparisons) {
    if (c["significant"].get<bool>()) (c["difference"].get<double>() > 0 ? better : worse) += 1;
    rows += (rows.empty() ? "" : "; ") + c["task"].get<std::string>() + " " +
            fmt("%+.1f", 100 * c["difference"].get<double>()) + " [" + fmt("%+.1f", 100 * c["low"].get<double>()) +
            ", " + fmt("%+.1f", 100 * c["high"].get<double>()) + "] (p (Holm) " + p_cell(c["p_holm"].get<double>()) +
            ")";
  }
  const int n = static_cast<int>(comparisons.size());
  return "better on " + std::to_string(better) + ", worse on " + std::to_string(worse) +
         ", no significant difference on " + std::to_string(n - better - worse) + " of " + std::to_string(n) +
         " tasks: " + rows;
}

}  // namespace

SeedStats seed_stats(const std::vector<double>& values) {
  if (values.empty()) throw Error("seed_stats: no values");
  SeedStats s;
  s.n = values.size();
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  s.median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  double sum = 0;
  for (double x : values) sum += x;
  s.mean = sum / static_cast<double>(n);
  if (n > 1) {
    double ss = 0;
    for (double x : values) ss += (x - s.mean) * (x - s.mean);
    s.std = std::sqrt(ss / static_cast<double>(n - 1));
  }
  return s;
}

json collect_paper_results(const PaperReportOptions& options) {
  if (!stdfs::is_directory(options.dir)) throw Error("report: " + options.dir + " is not a folder");
  const auto variants = options.variants.empty() ? discover_variants(options.dir) : options.variants;
  if (variants.empty())
    throw Error("report: no variants under " + options.dir + "/pretrain (run scripts/reproduce_paper.sh first)");
  json out;
  json meta = json::object();
  for (const auto& [k, v] : options.meta) meta[k] = v;
  out["meta"] = meta;
  std::set<std::string> task_set;
  json list = json::array();
  for (const auto& v : variants) list.push_back(collect_variant(options.dir, v, task_set));
  std::vector<std::string> tasks;
  for (const auto& t : data::glue_tasks())  // the GLUE paper's order, as in the task table
    if (task_set.count(t.name)) tasks.push_back(t.name);
  for (const auto& t : task_set)
    if (std::find(tasks.begin(), tasks.end(), t) == tasks.end()) tasks.push_back(t);
  out["tasks"] = tasks;
  // A task some variants have and others lack. (A reference outside the chosen variants is not
  // a gap: the comparisons are then empty, and `report` says so.)
  json incomplete = json::array();
  for (auto& v : list) {
    const std::string name = v["name"];
    for (const auto& t : tasks) {
      const std::string where = "glue/" + name + "/" + t;
      bool told = false;
      for (const auto& item : v["incomplete"]) told = told || item.get<std::string>().rfind(where + "/", 0) == 0 ||
                                                      item.get<std::string>().rfind(where + " ", 0) == 0;
      if (!v["glue"].contains(t) && !told) v["incomplete"].push_back(where + " is missing");
    }
    for (const auto& item : v["incomplete"]) incomplete.push_back(item);
  }
  out["incomplete"] = incomplete;
  out["variants"] = list;
  out["reference"] = options.reference;
  out["resamples"] = options.resamples;
  out["comparisons"] = paired_comparisons(options.dir, list, tasks, options.reference, options.resamples);
  out["baselines"] = task_baselines_and_constant_seeds(options.dir, out["variants"], tasks);
  out["claims"] = paper_claims(options.dir, out, tasks, options.resamples);
  return out;
}

std::string paper_results_markdown(const json& results) {
  std::ostringstream md;
  const auto& meta = results.value("meta", json::object());
  md << "# TISA paper reproduction" << (meta.contains("scale") ? " — scale " + meta["scale"].get<std::string>() : "")
     << "\n\n";
  for (auto it = meta.begin(); it != meta.end(); ++it)
    if (it.key() != "scale") md << "- " << it.key() << ": " << (it.value().is_string() ? it.value().get<std::string>() : it.value().dump()) << "\n";
  if (!meta.empty()) md << "\n";

  const auto& variants = results["variants"];
  std::vector<std::string> tasks = results.value("tasks", std::vector<std::string>{});
  const auto lengths = length_columns(variants);
  size_t max_seeds = 0;
  for (const auto& v : variants)
    for (const auto& t : v["glue"]) max_seeds = std::max(max_seeds, t["values"].size());

  md << "## Summary\n\nGLUE dev: main metric ×100 (CoLA mcc, STS-B (Pearson+Spearman)/2, MRPC acc/F1 mean, "
        "else accuracy), mean ± half-width of the 95 % confidence interval over "
     << max_seeds << " seed" << (max_seeds == 1 ? "" : "s")
     << " (Student's t); average = the same over the per-seed means over tasks. \"majority class\": the score of "
        "predicting the dev set's most frequent label for every example (undefined for correlations); \"k "
        "one-class\": k seeds predicted a single class (or value) for every dev example. Length columns: MLM loss on "
        "the validation split at each sequence length (lower is better).\n\n";
  md << "| variant | position | positional params |";
  for (const auto& t : tasks) md << " " << t << " |";
  md << " GLUE avg |";
  for (size_t i = 0; i < lengths.size(); ++i) md << " MLM loss " << length_header(lengths, i) << " |";
  md << "\n|---|---|---:|";
  for (size_t i = 0; i < tasks.size() + 1 + lengths.size(); ++i) md << "---:|";
  md << "\n";
  const json baselines = results.value("baselines", json::object());
  if (!baselines.empty()) {
    md << "| majority class | — | — |";
    for (const auto& t : tasks) {
      const json b = baselines.value(t, json());
      md << " " << (b.is_null() ? "—" : b["score"].is_number() ? fmt("%.1f", 100 * b["score"].get<double>()) : "undefined")
         << " |";
    }
    md << " — |";
    for (size_t i = 0; i < lengths.size(); ++i) md << " — |";
    md << "\n";
  }
  for (const auto& v : variants) {
    md << "| " << v["name"].get<std::string>() << " | " << v.value("position", "—") << " | "
       << (v.contains("positional_parameters") ? with_thousands(v["positional_parameters"].get<int64_t>()) : "—")
       << " |";
    for (const auto& t : tasks) {
      const json g = v["glue"].contains(t) ? v["glue"][t] : json();
      const size_t constant = g.is_object() && g.contains("constant_seeds") ? g["constant_seeds"].size() : 0;
      md << " " << stats_cell(g) << (constant ? " (" + std::to_string(constant) + " one-class)" : "") << " |";
    }
    md << " " << stats_cell(v.value("glue_average", json())) << " |";
    for (int64_t L : lengths) {
      const json* r = length_row(v, L);
      if (!r) md << " — |";
      else if (!r->value("available", false)) md << " " << r->value("reason", "n/a") << " |";
      else md << " " << fmt("%.3f", (*r)["mlm_loss"].get<double>()) << " |";
    }
    md << "\n";
  }

  if (!lengths.empty()) {
    md << "\n## Length extrapolation\n\nMLM loss / MLM accuracy (%) / SOP accuracy (%) on the validation split; "
          "examples built from the same documents at every length (no short sequences"
       << length_masking_clause(variants) << ").\n\n| variant |";
    for (size_t i = 0; i < lengths.size(); ++i) md << " " << length_header(lengths, i) << " |";
    md << "\n|---|";
    for (size_t i = 0; i < lengths.size(); ++i) md << "---:|";
    md << "\n";
    for (const auto& v : variants) {
      md << "| " << v["name"].get<std::string>() << " |";
      for (int64_t L : lengths) {
        const json* r = length_row(v, L);
        if (!r) md << " — |";
        else if (!r->value("available", false)) md << " " << r->value("reason", "n/a") << " |";
        else
          md << " " << fmt("%.3f", (*r)["mlm_loss"].get<double>()) << " / "
             << fmt("%.1f", 100 * (*r)["mlm_accuracy"].get<double>()) << " / "
             << fmt("%.1f", 100 * (*r)["sop_accuracy"].get<double>()) << " |";
      }
      md << "\n";
    }
  }

  md << "\n## Pretraining (last validation)\n\nτ: degree of translation invariance (SPEC §9) of the absolute "
        "position table's Gram matrix P·Pᵀ and, averaged over heads, of the first layer's position-to-position "
        "logit terms; 1 = Toeplitz (a function of j − i only). Shown as first → last evaluation; — without an "
        "absolute table.\n\n"
        "| variant | steps | MLM loss | MLM acc (%) | SOP acc (%) | τ P·Pᵀ | τ heads (mean) |\n"
        "|---|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& v : variants) {
    md << "| " << v["name"].get<std::string>() << " |";
    if (!v.contains("pretrain_eval")) {
      md << " — | — | — | — | — | — |\n";
      continue;
    }
    const auto& p = v["pretrain_eval"];
    // "first → last" of a τ key, or — when the run logged none.
    auto tau_cell = [&](const char* key) -> std::string {
      if (!p.contains(key) || !p[key].is_number()) return "—";
      const std::string last = fmt("%.3f", p[key].get<double>());
      if (!v.contains("pretrain_tau_first") || !v["pretrain_tau_first"][key].is_number()) return last;
      const auto& first = v["pretrain_tau_first"];
      if (first["step"] == p["step"]) return last;
      return fmt("%.3f", first[key].get<double>()) + " (step " + std::to_string(first["step"].get<int64_t>()) +
             ") → " + last;
    };
    md << " " << (p.contains("step") ? std::to_string(p["step"].get<int64_t>()) : "—") << " | "
       << (p.contains("mlm_loss") ? fmt("%.3f", p["mlm_loss"].get<double>()) : "—") << " | "
       << (p.contains("mlm_accuracy") ? fmt("%.1f", 100 * p["mlm_accuracy"].get<double>()) : "—") << " | "
       << (p.contains("sop_accuracy") ? fmt("%.1f", 100 * p["sop_accuracy"].get<double>()) : "—") << " | "
       << tau_cell("tau_gram") << " | " << tau_cell("tau_heads_mean") << " |\n";
  }

  // The paper's claims next to what this run measured (issue 31, point 5).
  const json claims = results.value("claims", json::object());
  if (!claims.empty()) {
    md << "\n## What the paper claims and what this run shows\n\n"
          "Claims as SPEC §1 states them; Δ ×100 in each task's main metric with its 95 % interval (the paired "
          "tests below).\n\n| comparison | the paper | this run |\n|---|---|---|\n";
    if (claims.contains("absolute_tisa_vs_absolute")) {
      const auto& c = claims["absolute_tisa_vs_absolute"];
      md << "| absolute + TISA against absolute (ALBERT), GLUE dev | better | " << claim_evidence(c["comparisons"])
         << (c["holm_over"] == "table" ? " (Holm over the whole table)" : " (Holm over these tasks)") << " |\n";
    }
    if (claims.contains("tisa_vs_shaw")) {
      md << "| TISA against Shaw et al., GLUE dev | compared in the paper; SPEC §1 states no direction | "
         << claim_evidence(claims["tisa_vs_shaw"]["comparisons"]) << " (Holm over these tasks) |\n";
    }
    if (claims.contains("positional_parameters")) {
      std::string cell;
      for (auto it = claims["positional_parameters"].begin(); it != claims["positional_parameters"].end(); ++it)
        cell += (cell.empty() ? "" : "; ") + it.key() + " " + with_thousands(it.value().get<int64_t>());
      md << "| positional parameters | TISA adds orders of magnitude fewer than ALBERT's table | " << cell << " |\n";
    }
    if (claims.contains("absolute_invariance")) {
      const auto& first = claims["absolute_invariance"]["first"];
      const auto& last = claims["absolute_invariance"]["last"];
      md << "| translation invariance of the absolute table (τ of its Gram matrix, SPEC §9) | grows during "
            "pretraining | "
         << fmt("%.3f", first["tau_gram"].get<double>()) << " at update " << with_thousands(first["step"].get<int64_t>())
         << " → " << fmt("%.3f", last["tau_gram"].get<double>()) << " at update "
         << with_thousands(last["step"].get<int64_t>()) << " |\n";
    }
  }

  const auto& comparisons = results.value("comparisons", json::array());
  if (!comparisons.empty()) {
    const std::string ref = results.value("reference", "absolute");
    const int64_t draws = comparisons[0]["resamples"].get<int64_t>() + comparisons[0]["dropped_resamples"].get<int64_t>();
    const bool has_ar = comparisons[0].contains("p_randomisation");
    md << "\n## Paired comparison with " << ref << "\n\nΔ = mean over seeds of (variant − " << ref
       << ") in the task's main metric ×100 on the dev set, with the same seeds (so the same fine-tuning data "
          "order); 95 % interval and two-sided p from a paired bootstrap over dev examples ("
       << draws << " resamples, the same draw for both variants and every seed; p = 2·(k + 1)/(B + 1), so the "
       << "smallest attainable p is " << p_cell(metrics::smallest_bootstrap_p(draws)) << ")";
    if (has_ar)
      md << "; p (AR) from approximate randomisation (" << draws
         << " trials swapping the two variants' predictions per example, (k + 1)/(R + 1), smallest attainable "
         << p_cell(1.0 / static_cast<double>(draws + 1)) << ")";
    const bool has_draws = std::any_of(comparisons.begin(), comparisons.end(),
                                       [](const json& c) { return c.contains("pretraining_draws"); });
    if (has_draws)
      md << ". Rows with several pretrainings (seeds column: pretrainings × seeds; the runs name@k) pair "
            "pretraining k with the reference's pretraining k and take Δ over every pretraining and seed; their "
            "interval and p resample the pretrainings, then the fine-tuning seeds within each, then the examples "
            "(nested bootstrap), so they include the pretraining draw";
    md << ". p (Holm) adjusts the bootstrap p for the " << comparisons.size()
       << " comparisons of this table; significant = p (Holm) ≤ 0.05.\n\n"
       << "| variant | task | seeds | Δ | 95 % interval | p | " << (has_ar ? "p (AR) | " : "") << "p (Holm) | verdict |\n"
       << "|---|---|---:|---:|---|---:|" << (has_ar ? "---:|" : "") << "---:|---|\n";
    std::vector<std::string> significant;
    for (const auto& c : comparisons) {
      const bool has_p = c["p"].is_number();
      const std::string seeds_cell =
          c.contains("pretraining_draws")
              ? std::to_string(c["pretraining_draws"].size()) + " × " + std::to_string(c["seeds"].size())
              : std::to_string(c["seeds"].size());
      md << "| " << c["variant"].get<std::string>() << " | " << c["task"].get<std::string>() << " | "
         << seeds_cell << " | " << fmt("%+.1f", 100 * c["difference"].get<double>()) << " | ["
         << fmt("%+.1f", 100 * c["low"].get<double>()) << ", " << fmt("%+.1f", 100 * c["high"].get<double>()) << "] | "
         << (has_p ? p_cell(c["p"].get<double>()) : "n/a") << " | ";
      if (has_ar)
        md << (c["p_randomisation"].is_number() ? p_cell(c["p_randomisation"].get<double>()) : "n/a") << " | ";
      md << p_cell(c["p_holm"].get<double>()) << " | " << comparison_verdict(c) << " |\n";
      if (c["significant"].get<bool>())
        significant.push_back(c["variant"].get<std::string>() + " is " + comparison_verdict(c) + " than " + ref +
                              " on " + c["task"].get<std::string>() + " (" +
                              fmt("%+.1f", 100 * c["difference"].get<double>()) + ", p (Holm) " +
                              p_cell(c["p_holm"].get<double>()) + ")");
    }
    md << "\n**Significance.** ";
    if (significant.empty()) {
      md << "No variant differs significantly from " << ref << " on any task (family-wise level 5 %, Holm over "
         << comparisons.size() << " comparisons).\n";
    } else {
      md << significant.size() << " of " << comparisons.size()
         << " comparisons are significant at the family-wise 5 % level (Holm): ";
      for (size_t i = 0; i < significant.size(); ++i) md << (i ? "; " : "") << significant[i];
      md << ". Every other difference is within what resampling the dev set produces.\n";
    }
  }

  if (!tasks.empty()) {
    md << "\n## GLUE per seed\n\n* = the seed predicts one class (or value) for every dev example.\n\n"
          "| variant | task | metric | seeds | values (×100) |\n|---|---|---|---|---|\n";
    for (const auto& v : variants)
      for (const auto& t : tasks) {
        if (!v["glue"].contains(t)) continue;
        const auto& g = v["glue"][t];
        std::string seeds, values;
        for (size_t i = 0; i < g["values"].size(); ++i) {
          seeds += (i ? "," : "") + std::to_string(g["seeds"][i].get<int64_t>());
          values += (i ? ", " : "") + fmt("%.1f", 100 * g["values"][i].get<double>());
          const json constant = g.value("constant_seeds", json::array());
          if (std::find(constant.begin(), constant.end(), g["seeds"][i]) != constant.end()) values += "*";
        }
        md << "| " << v["name"].get<std::string>() << " | " << t << " | " << g["main_metric"].get<std::string>()
           << " | " << seeds << " | " << values << " |\n";
      }
  }
  return md.str();
}

bool write_comparison_figure(const json& results, const std::string& svg_path) {
  const auto& comparisons = results.value("comparisons", json::array());
  if (comparisons.empty()) return false;
  const std::string ref = results.value("reference", "absolute");
  plot::Figure figure;
  figure.title = "GLUE dev: difference from " + ref + " (×100, paired bootstrap 95 % interval; coloured = significant, Holm)";
  for (const auto& task : results.value("tasks", std::vector<std::string>{})) {
    plot::IntervalChart chart;
    chart.title = task;
    for (const auto& c : comparisons) {
      if (c["task"] != task) continue;
      chart.x_label = c["metric"].get<std::string>() + " − " + ref;
      chart.rows.push_back({c["variant"].get<std::string>(), 100 * c["difference"].get<double>(),
                            100 * c["low"].get<double>(), 100 * c["high"].get<double>(), c["significant"].get<bool>()});
    }
    if (!chart.rows.empty()) figure.panels.push_back(chart);
  }
  figure.columns = std::min<int>(3, static_cast<int>(figure.panels.size()));
  figure.panel_width = 380;
  figure.panel_height = 60 + 26 * static_cast<double>(comparisons.size() / std::max<size_t>(1, figure.panels.size())) + 40;
  plot::write_svg(svg_path, figure);
  return true;
}

bool write_pretraining_figure(const std::string& dir, const json& results, const std::string& svg_path) {
  plot::PlotRunsOptions o;
  for (const auto& v : results.value("variants", json::array())) {
    const std::string run = (stdfs::path(dir) / "pretrain" / v["name"].get<std::string>()).string();
    if (fs::exists(run + "/metrics.jsonl")) o.runs.push_back(run);
  }
  if (o.runs.empty()) return false;
  o.out = svg_path;
  o.keys = {"train:loss", "train:mlm_loss", "eval:mlm_loss", "eval:mlm_accuracy", "eval:sop_accuracy", "lr"};
  o.smooth = 0.6;
  const json meta = results.value("meta", json::object());
  o.title = "Pretraining" + (meta.contains("scale") ? ", scale " + meta["scale"].get<std::string>() : std::string());
  plot::plot_runs(o);
  return true;
}

}  // namespace tisa::report
