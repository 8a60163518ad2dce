// Figures of training runs from metrics.jsonl (see run_plots.h).
#include "plot/run_plots.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "common/error.h"
#include "common/fs.h"
#include "plot/svg.h"

namespace tisa::plot {
namespace {

// Panels we know, in the order they are drawn (event, key).
const std::vector<std::pair<std::string, std::string>> kKnownPanels = {
    {"train", "loss"},          {"train", "mlm_loss"},       {"train", "sop_loss"},
    {"eval", "loss"},           {"eval", "mlm_loss"},        {"eval", "sop_loss"},
    {"eval", "mlm_accuracy"},   {"eval", "sop_accuracy"},    {"eval", "accuracy"},
    {"eval", "tau_gram"},       {"eval", "tau_heads_mean"},  {"train", "lr"},
};

const std::set<std::string> kNotPlotted = {"event", "step", "time"};
// Counts that say how big an evaluation was, not how good: drawn only when asked for by --keys.
const std::set<std::string> kBookkeeping = {"examples", "predictions"};
// Schedules and running totals: smooth by construction, an average would only shift them.
const std::set<std::string> kNeverSmoothed = {"lr", "tokens_seen", "examples_seen", "epoch"};

std::string run_name(const std::string& path) {
  std::filesystem::path p(path);
  if (p.filename() == "metrics.jsonl") p = p.parent_path();
  std::string name = p.lexically_normal().filename().string();
  if (name.empty() || name == ".") name = p.lexically_normal().parent_path().filename().string();
  return name.empty() ? path : name;
}

bool wanted(const std::vector<std::string>& keys, const std::string& event, const std::string& key) {
  if (keys.empty()) return true;
  return std::find(keys.begin(), keys.end(), key) != keys.end() ||
         std::find(keys.begin(), keys.end(), event + ":" + key) != keys.end();
}

std::string label_of(const std::string& key) {
  if (key == "tau_gram") return "τ(P·Pᵀ)";
  if (key == "tau_heads_mean") return "mean τ of first-layer heads";
  if (key == "lr") return "learning rate";
  return key;
}

}  // namespace

RunMetrics read_run_metrics(const std::string& run_dir, const std::string& x_key) {
  RunMetrics run;
  run.path = std::filesystem::is_directory(run_dir) ? run_dir + "/metrics.jsonl" : run_dir;
  run.name = run_name(run_dir);
  if (!fs::exists(run.path)) throw Error(run.path + ": not found (expected the metrics.jsonl of a run)");
  std::string text = fs::read_file(run.path);
  size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    bool terminated = end != std::string::npos;
    std::string line = text.substr(pos, terminated ? end - pos : std::string::npos);
    pos = terminated ? end + 1 : text.size();
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json record;
    try {
      record = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      if (!terminated) {
        spdlog::warn("[plot] {}:{}: incomplete last line skipped (run still writing?)", run.path, line_no);
        break;
      }
      throw Error(run.path + ":" + std::to_string(line_no) + ": not a JSON object: " + e.what());
    }
    if (!record.is_object()) throw Error(run.path + ":" + std::to_string(line_no) + ": not a JSON object");
    auto ev = record.find("event");
    auto xv = record.find(x_key);
    if (ev == record.end() || !ev->is_string() || xv == record.end() || !xv->is_number())
      throw Error(run.path + ":" + std::to_string(line_no) + ": record without a string \"event\" and a numeric \"" +
                  x_key + "\"");
    double x = xv->get<double>();
    auto& by_key = run.series[ev->get<std::string>()];
    for (auto it = record.begin(); it != record.end(); ++it) {
      if (kNotPlotted.count(it.key()) || !it.value().is_number() || it.value().is_boolean()) continue;
      auto& points = by_key[it.key()];
      // A resumed run rewrites steps it had already logged: keep the newer history.
      if (x_key == "step")
        while (!points.empty() && points.back().first >= x) points.pop_back();
      points.emplace_back(x, it.value().get<double>());
    }
  }
  return run;
}

std::vector<double> curve_values(const std::string& event, const std::string& key,
                                 const std::vector<std::pair<double, double>>& points, double weight) {
  const bool smooth = weight > 0 && event == "train" && !kNeverSmoothed.count(key);
  std::vector<double> ys;
  ys.reserve(points.size());
  double avg = NAN;
  for (const auto& point : points) {
    const double y = point.second;
    avg = (smooth && std::isfinite(avg)) ? weight * avg + (1 - weight) * y : y;
    ys.push_back(avg);
  }
  return ys;
}

std::vector<std::pair<std::string, std::string>> panel_order(const std::vector<RunMetrics>& runs) {
  std::set<std::pair<std::string, std::string>> present;
  for (const auto& run : runs)
    for (const auto& [event, keys] : run.series)
      for (const auto& [key, points] : keys)
        if (!points.empty()) present.insert({event, key});
  std::vector<std::pair<std::string, std::string>> order;
  for (const auto& panel : kKnownPanels)
    if (present.erase(panel)) order.push_back(panel);
  // The rest: train first, then eval, then other events; keys alphabetically (std::set order).
  for (const char* event : {"train", "eval"})
    for (auto it = present.begin(); it != present.end();)
      if (it->first == event) {
        order.push_back(*it);
        it = present.erase(it);
      } else {
        ++it;
      }
  order.insert(order.end(), present.begin(), present.end());
  return order;
}

size_t plot_runs(const PlotRunsOptions& options) {
  if (options.runs.empty()) throw Error("plot: no runs given (--runs DIR...)");
  if (options.x_key != "step" && options.x_key != "time")
    throw Error("plot: --x must be 'step' or 'time', got '" + options.x_key + "'");
  if (!(options.smooth >= 0 && options.smooth < 1)) throw Error("plot: --smooth must be in [0, 1)");
  std::string ext = std::filesystem::path(options.out).extension().string();
  if (ext != ".svg") throw Error("plot: --out " + options.out + ": only SVG output is written (use a .svg name)");

  std::vector<RunMetrics> runs;
  for (const auto& dir : options.runs) runs.push_back(read_run_metrics(dir, options.x_key));
  // Runs with the same folder name (a/run, b/run) get their parent folder as well.
  for (size_t i = 0; i < runs.size(); ++i)
    for (size_t k = 0; k < runs.size(); ++k)
      if (i != k && runs[i].name == runs[k].name) {
        for (auto* r : {&runs[i], &runs[k]}) {
          std::filesystem::path p = std::filesystem::path(r->path).parent_path().lexically_normal();
          r->name = (p.parent_path().filename() / p.filename()).string();
        }
      }

  Figure figure;
  figure.title = options.title.empty() ? "tisa-train runs" : options.title;
  figure.columns = options.columns;
  figure.panel_width = 440;
  figure.panel_height = 310;
  for (size_t i = 0; i < runs.size(); ++i) figure.legend.push_back({runs[i].name, palette_color(i), false});

  for (const auto& [event, key] : panel_order(runs)) {
    if (!wanted(options.keys, event, key)) continue;
    if (options.keys.empty() && kBookkeeping.count(key)) continue;
    LineChart chart;
    chart.title = event + ": " + label_of(key);
    chart.x_label = options.x_key == "step" ? "step" : "time (s)";
    chart.legend = false;
    for (size_t i = 0; i < runs.size(); ++i) {
      Series s;
      s.name = runs[i].name;
      s.color = palette_color(i);
      auto ev = runs[i].series.find(event);
      if (ev != runs[i].series.end()) {
        auto it = ev->second.find(key);
        if (it != ev->second.end()) {
          for (const auto& point : it->second) s.x.push_back(point.first);
          s.y = curve_values(event, key, it->second, options.smooth);
        }
      }
      chart.series.push_back(std::move(s));  // empty series keep colours aligned with the legend
    }
    if (key.rfind("tau", 0) == 0) chart.y_max = 1.0;  // τ ≤ 1
    figure.panels.push_back(std::move(chart));
  }
  if (figure.panels.empty())
    throw Error("plot: no numeric values" + std::string(options.keys.empty() ? "" : " for the requested --keys") +
                " in the metrics of " + std::to_string(runs.size()) + " run(s)");
  std::filesystem::path out_dir = std::filesystem::path(options.out).parent_path();
  if (!out_dir.empty()) fs::create_directories(out_dir.string());
  write_svg(options.out, figure);
  spdlog::info("[plot] wrote {} ({} panels, {} runs)", options.out, figure.panels.size(), runs.size());
  return figure.panels.size();
}

}  // namespace tisa::plot
