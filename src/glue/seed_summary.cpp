// Mean / std / median over seeds (see seed_summary.h).
#include "glue/seed_summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "common/error.h"

namespace tisa::glue {

std::vector<int64_t> parse_seed_list(const std::string& text) {
  const std::string expected = " (expected distinct integers, e.g. --seeds 1,2,3)";
  std::vector<int64_t> seeds;
  std::set<int64_t> seen;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) throw Error("--seeds '" + text + "': an empty item between commas" + expected);
    long long v = 0;
    try {
      size_t used = 0;
      v = std::stoll(item, &used);
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      throw Error("--seeds: '" + item + "' is not an integer" + expected);
    }
    if (!seen.insert(v).second) throw Error("--seeds '" + text + "': seed " + item + " is given twice" + expected);
    seeds.push_back(v);
  }
  // getline drops a trailing empty item ("1,"); an empty text yields no seeds at all.
  if (seeds.empty() || text.back() == ',')
    throw Error("--seeds '" + text + "': " + (seeds.empty() ? "no seeds" : "an empty item after the last comma") +
                expected);
  return seeds;
}

void check_distinct_seeds(const std::vector<int64_t>& seeds) {
  std::set<int64_t> seen;
  for (int64_t s : seeds)
    if (!seen.insert(s).second)
      throw Error("seed " + std::to_string(s) + " is given twice (a seed is one run; expected distinct seeds)");
}

std::map<std::string, MetricSummary> summarize_runs(const std::map<int64_t, std::map<std::string, double>>& runs) {
  std::map<std::string, std::vector<double>> values;
  for (const auto& [seed, run] : runs)
    for (const auto& [name, v] : run) values[name].push_back(v);
  std::map<std::string, MetricSummary> out;
  for (auto& [name, v] : values) {
    MetricSummary s;
    s.runs = v.size();
    double sum = 0;
    for (double x : v) sum += x;
    s.mean = sum / static_cast<double>(v.size());
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.std = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    s.min = v.front();
    s.max = v.back();
    out[name] = s;
  }
  return out;
}

nlohmann::json summary_to_json(const std::map<std::string, MetricSummary>& summary) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, s] : summary)
    j[name] = {{"mean", s.mean}, {"std", s.std}, {"median", s.median}, {"min", s.min}, {"max", s.max},
               {"runs", s.runs}};
  return j;
}

std::string format_summary_table(const std::string& title, const std::map<std::string, MetricSummary>& summary) {
  std::string out = title + "\n";
  char line[256];
  std::snprintf(line, sizeof(line), "  %-22s %9s %9s %9s %9s %9s %5s\n", "metric", "mean", "std", "median", "min",
                "max", "runs");
  out += line;
  for (const auto& [name, s] : summary) {
    std::snprintf(line, sizeof(line), "  %-22s %9.4f %9.4f %9.4f %9.4f %9.4f %5zu\n", name.c_str(), s.mean, s.std,
                  s.median, s.min, s.max, s.runs);
    out += line;
  }
  return out;
}

}  // namespace tisa::glue
