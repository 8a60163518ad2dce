// GLUE evaluation metrics (SPEC §8), torch-free: accuracy, binary F1, Matthews correlation,
// Pearson and Spearman correlation, and a task's metric set. Which metrics a task reports, their
// key names and its main metric are rows of the task table (data/glue_tsv.h: GlueTask::metrics,
// main, prefixed_metric_keys); this file computes what the table lists, and the goldens in
// shared/golden/metrics/ pin the result to transformers' glue_compute_metrics (4.30) to 1e-12.
//
// Conventions (scikit-learn 1.2 / SciPy 1.10, as the goldens):
//   * f1_binary: positive class 1; no predicted or true positives → 0 (zero_division = 0).
//   * matthews_corrcoef: multi-class formula (equals the binary one for two classes); 0 when the
//     denominator is 0 (e.g. constant predictions).
//   * pearson / spearman: NaN when an input is constant (SciPy warns and returns NaN); callers
//     write NaN as JSON null. spearman uses average ranks for ties.
// Length mismatches, empty inputs and out-of-range class ids throw tisa::Error.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "data/glue_tsv.h"

namespace tisa::metrics {

double accuracy(const std::vector<int64_t>& labels, const std::vector<int64_t>& preds);
double f1_binary(const std::vector<int64_t>& labels, const std::vector<int64_t>& preds);
double matthews_corrcoef(const std::vector<int64_t>& labels, const std::vector<int64_t>& preds);
double pearson(const std::vector<double>& x, const std::vector<double>& y);
double spearman(const std::vector<double>& x, const std::vector<double>& y);
// Average ranks (1-based; ties share the mean of their positions), as scipy.stats.rankdata.
std::vector<double> average_ranks(const std::vector<double>& values);

// Metrics of one GLUE task, in transformers' key names and order, plus the main metric used to
// pick the best checkpoint.
struct MetricSet {
  std::vector<std::pair<std::string, double>> values;  // e.g. {"acc", 0.8}, {"f1", 0.7}, ...
  std::string main;                                   // key of the main metric
  double get(const std::string& key) const;           // throws tisa::Error when absent
  double main_value() const { return get(main); }
};

// The metrics name of a task or split under the task table's name rule: "CoLA" → "cola",
// "SST-2"/"sst2" → "sst-2", "STS-B"/"stsb" → "sts-b", "MNLI-mm" → "mnli-mm", "AX"/"diagnostic" →
// "ax". Throws tisa::Error listing the known tasks for an unknown name.
std::string metric_task_name(const std::string& task);

// The metrics `task` lists (GlueTask::metrics), keyed as `metric_task` names them (MNLI's
// dev_mismatched: "mnli-mm" → "mnli-mm/acc"), main = the task's main metric. Class-id metrics
// need whole-number preds/labels (classification); score metrics take them as they are (STS-B).
MetricSet compute_task_metrics(const data::GlueTask& task, const std::string& metric_task,
                               const std::vector<double>& preds, const std::vector<double>& labels);

// compute_task_metrics() of the task or split whose metrics name (or task name) is `task`; the
// same keys and values as transformers 4.30's glue_compute_metrics(task, preds, labels):
//   cola, ax: mcc | sst-2, qnli, rte, wnli: acc | mrpc, qqp: acc, f1, acc_and_f1 |
//   sts-b: pearson, spearmanr, corr | mnli: mnli/acc | mnli-mm: mnli-mm/acc
MetricSet glue_compute_metrics(const std::string& task, const std::vector<double>& preds,
                               const std::vector<double>& labels);

}  // namespace tisa::metrics
