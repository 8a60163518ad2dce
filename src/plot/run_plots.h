// `tisa-train plot`: curves of one or more runs from their metrics.jsonl (src/common/
// metrics_writer.h: one JSON object per line, {"event", "step", "time", ...values}). One panel per
// (event, numeric key) — train loss, eval accuracy, τ, learning rate, ... — one series per run,
// a shared legend by run name. Torch-free.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tisa::plot {

// The numeric series of one run: event → key → (x, y) points in file order, after resolving
// resumes (a record whose step is ≤ an earlier one of the same event drops those earlier points,
// so a resumed run shows its final history once).
struct RunMetrics {
  std::string name;
  std::string path;
  std::map<std::string, std::map<std::string, std::vector<std::pair<double, double>>>> series;
};

// Reads <run_dir>/metrics.jsonl (or run_dir itself when it is a file). `x_key` is "step" or
// "time". Non-numeric values (strings, arrays) are ignored; a malformed line throws tisa::Error
// naming the file and line, except an unterminated last line (a live run mid-write), which is
// skipped with a warning.
RunMetrics read_run_metrics(const std::string& run_dir, const std::string& x_key = "step");

struct PlotRunsOptions {
  std::vector<std::string> runs;   // run directories (or metrics.jsonl files)
  std::string out;                 // .svg file
  std::vector<std::string> keys;   // only these panels: "key" (any event) or "event:key"; empty = all
                                   // but bookkeeping counts (eval examples, predictions)
  std::string x_key = "step";      // x axis: step or time
  double smooth = 0.0;             // exponential moving average of noisy train curves (not of the
                                   // learning rate or running totals), weight of the past ∈ [0, 1)
  int columns = 3;
  std::string title;               // figure title (default: "tisa-train runs")
};

// Draws the figure and writes it; returns the number of panels.
size_t plot_runs(const PlotRunsOptions& options);

// The y values of one curve as drawn: `points` smoothed by an exponential moving average with
// weight `weight` of the past when the curve is a noisy train measurement (loss, grad_norm,
// tokens_per_s, ...); a schedule or running total (lr, tokens_seen) and eval curves unchanged,
// since averaging them would only shift them.
std::vector<double> curve_values(const std::string& event, const std::string& key,
                                 const std::vector<std::pair<double, double>>& points, double weight);

// Panel order: known keys first (loss, accuracy, τ, lr), then the rest alphabetically.
std::vector<std::pair<std::string, std::string>> panel_order(const std::vector<RunMetrics>& runs);

}  // namespace tisa::plot
