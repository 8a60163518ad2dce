// Summary of several fine-tunings of one task with different seeds: per metric the mean, the
// sample standard deviation (n − 1 in the denominator; 0 for a single run) and the median, as
// JSON (results.json) and as a printed table.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tisa::glue {

struct MetricSummary {
  double mean = 0, std = 0, median = 0, min = 0, max = 0;
  size_t runs = 0;
};

// The seeds of `--seeds 1,2,3`, in the order given. Seeds are a set: an empty list or item, a
// non-integer and a repeated seed each throw tisa::Error naming it.
std::vector<int64_t> parse_seed_list(const std::string& text);

// Throws tisa::Error naming the first seed that `seeds` holds twice (GlueRunOptions built in code).
void check_distinct_seeds(const std::vector<int64_t>& seeds);

// Per metric name over the runs, one run per seed (keyed by seed, so no seed counts twice; a
// metric missing from some run is summarised over the others).
std::map<std::string, MetricSummary> summarize_runs(const std::map<int64_t, std::map<std::string, double>>& runs);

nlohmann::json summary_to_json(const std::map<std::string, MetricSummary>& summary);

// Rows "metric  mean  std  median  min  max  runs" with a header line; `title` above.
std::string format_summary_table(const std::string& title, const std::map<std::string, MetricSummary>& summary);

}  // namespace tisa::glue
