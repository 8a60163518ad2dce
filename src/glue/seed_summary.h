// Summary of several fine-tunings of one task with different seeds: per metric the mean, the
// sample standard deviation (n − 1 in the denominator; 0 for a single run) and the median, as
// JSON (results.json) and as a printed table.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tisa::glue {

struct MetricSummary {
  double mean = 0, std = 0, median = 0, min = 0, max = 0;
  size_t runs = 0;
};

// Per metric name over the runs (a metric missing from some run is summarised over the others).
std::map<std::string, MetricSummary> summarize_runs(const std::vector<std::map<std::string, double>>& runs);

nlohmann::json summary_to_json(const std::map<std::string, MetricSummary>& summary);

// Rows "metric  mean  std  median  min  max  runs" with a header line; `title` above.
std::string format_summary_table(const std::string& title, const std::map<std::string, MetricSummary>& summary);

}  // namespace tisa::glue
