// What the trainer side needs to know about each GLUE task (SPEC §8): label strings in id order
// (from data/glue_tsv.h), regression or not, which prepared splits are dev and test sets, the
// leaderboard file each test split goes to, and the metric that picks the best checkpoint.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace tisa::glue {

struct TestSplit {
  std::string split;        // prepared split name, e.g. "test_matched"
  std::string leaderboard;  // file name, e.g. "MNLI-m.tsv"
};

struct GlueTaskInfo {
  std::string name;                     // canonical, e.g. "SST-2"
  bool regression = false;              // STS-B
  std::vector<std::string> labels;      // label strings, index = class id (empty for regression)
  std::vector<std::string> dev_splits;  // "dev", or "dev_matched" and "dev_mismatched" (MNLI)
  std::vector<TestSplit> test_splits;   // test sets predicted into leaderboard files
  std::string main_metric;              // flattened metric key that selects the best checkpoint
  int64_t num_labels() const { return regression ? 1 : static_cast<int64_t>(labels.size()); }
};

// Case-insensitive lookup ("sst-2", "SST2" and "sst2" too); throws tisa::Error listing the tasks.
const GlueTaskInfo& glue_task(const std::string& name);
// The nine trainable tasks in GLUE order (AX is evaluated with the MNLI model, not trained).
const std::vector<std::string>& glue_task_names();

// Task name for metrics::glue_compute_metrics of one split: e.g. "mnli" for dev_matched and
// "mnli-mm" for dev_mismatched, whose keys ("mnli/acc", "mnli-mm/acc") then stay distinct when
// the metrics of all dev splits are merged into one map.
std::string metrics_task_for_split(const GlueTaskInfo& task, const std::string& split);

}  // namespace tisa::glue
