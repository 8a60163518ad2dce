// Official GLUE TSV files (SPEC §8) → examples, and GLUE leaderboard files back. Torch-free.
//
// The GLUE task table (glue_tasks()) is the one place that describes a task: folder, files,
// columns, label set, the metrics it reports and the one that picks the best checkpoint, ALBERT's
// default fine-tuning hyper-parameters, and which task's model predicts a test-only set (AX by
// MNLI). The trainer side (glue/glue_tasks.h), `prepare glue`, the defaults of `tisa-train glue`,
// the metrics (metrics/glue_metrics.h) and the report all read it: adding a task is one row.
//
// Per task and split it fixes the file name, whether it has a header
// (and its column names, checked: a file without its header would otherwise lose its first row),
// the exact column count and which columns hold text_a, text_b, the label and the test id. A split
// without any example is an error (a header-only dev file must fail before training, not after). Files
// are split on TAB only (no quoting: rows contain `"`); a UTF-8 BOM at the start, CRLF line ends,
// a last line without newline and blank lines are tolerated. A malformed row (wrong column count,
// unknown label, bad float, bad id) is a tisa::Error "<file>:<line>: <task> <split>: ...", except
// QQP's known short rows in train/dev (fewer than 6 columns), which are skipped and counted in
// GlueReadStats as transformers' QqpProcessor does.
//
// Label strings map to class indices in the order of GlueTask::labels (SPEC §8):
//   CoLA, SST-2, MRPC, QQP, WNLI: "0", "1";  MNLI (and AX): contradiction, entailment, neutral;
//   QNLI, RTE: entailment, not_entailment;  STS-B: regression, a float score in [0, 5].
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace tisa::data {

// One file of a task: where its fields are. Column numbers are 0-based; -1 = absent.
struct GlueSplitFormat {
  std::string name;         // "train", "dev", "dev_matched", "test", "test_matched", "diagnostic", ...
  std::string file;         // file name inside the task folder, e.g. "dev_matched.tsv"
  bool header = true;       // first line is a header
  int columns = 0;          // exact number of TAB-separated fields per row
  int text_a = -1;
  int text_b = -1;          // -1: single-sentence task
  int label = -1;           // -1: unlabelled (test) split
  int index = -1;           // id column of test files; -1: the 0-based data row number is used
  std::string leaderboard;  // leaderboard file name for unlabelled splits ("MNLI-m.tsv"), else ""
  std::vector<std::string> header_names;  // the official header's column names (header splits)
  std::string metric_task;  // metrics name of this split when it differs from the task's ("mnli-mm")
};

// A metric a task reports, under transformers' glue_compute_metrics (4.30) key names. The first
// four compare class ids, the last three scores (regression).
enum class GlueMetric {
  kAccuracy,  // "acc"
  kF1,        // "f1": binary F1 of class 1
  kAccAndF1,  // "acc_and_f1": (acc + f1) / 2
  kMcc,       // "mcc": Matthews correlation
  kPearson,   // "pearson"
  kSpearman,  // "spearmanr"
  kCorr,      // "corr": (pearson + spearmanr) / 2
};
// The key name ("acc", "spearmanr", ...).
const char* glue_metric_key(GlueMetric metric);
// True for kPearson, kSpearman and kCorr (they read scores, the others class ids).
bool glue_metric_on_scores(GlueMetric metric);

// ALBERT's fine-tuning settings of a task (run_glue.sh; WNLI: the ALBERT paper's Table 14): the
// task's layer of `tisa-train glue`'s settings (config.h defaults < these < --config < --set).
struct GlueHyperParameters {
  double lr = 0;
  int64_t batch_size = 0;
  int64_t steps = 0;
  int64_t warmup_steps = 0;
};

struct GlueTask {
  std::string name;                 // canonical: "CoLA", "SST-2", ..., "AX"
  std::string dir;                  // folder under the GLUE data root ("diagnostic" for AX)
  std::vector<std::string> labels;  // class names in index order; empty for regression (STS-B)
  bool regression = false;
  bool skip_short_rows = false;     // train/dev rows with too few columns are skipped (QQP)
  std::string metric_task;          // transformers' task name for metrics ("cola", "sts-b", ...)
  std::vector<GlueSplitFormat> splits;
  std::vector<GlueMetric> metrics;  // what evaluation reports, in this order
  GlueMetric main = GlueMetric::kAccuracy;  // the one that picks the best checkpoint
  bool prefixed_metric_keys = false;  // keys read "<metric_task>/acc" (MNLI: "mnli/acc", "mnli-mm/acc")
  std::string main_metric;          // key of `main` ("mnli/acc"); "" when not trained (AX)
  GlueHyperParameters defaults;     // zero when not trained (AX)
  std::string predicted_by;         // a test-only task predicted by this task's model ("MNLI" for AX)
  int64_t num_labels() const { return regression ? 1 : static_cast<int64_t>(labels.size()); }
  // Has a train split (AX has none: it is predicted by predicted_by's model).
  bool trainable() const;
  // The first labelled split other than train, the one that must exist to fine-tune ("dev",
  // MNLI's "dev_matched"). Throws for a task without one.
  const GlueSplitFormat& main_dev_split() const;
  // The split's format; a test-only task (AX) accepts "test" for its one split ("diagnostic").
  // Throws listing the task's splits.
  const GlueSplitFormat& split(const std::string& name) const;
  // The metrics name of a split: its own metric_task, else the task's ("mnli-mm" for MNLI's
  // dev_mismatched, "mnli" for dev_matched).
  const std::string& split_metric_task(const GlueSplitFormat& split) const;
  // Metric key under a metrics name: "acc", or "mnli-mm/acc" with prefixed_metric_keys.
  std::string metric_key(GlueMetric metric, const std::string& metric_task_name) const;
};

// All tasks: CoLA, SST-2, MRPC, STS-B, QQP, MNLI, QNLI, RTE, WNLI, AX.
const std::vector<GlueTask>& glue_tasks();
// Case-insensitive, ignoring everything but letters and digits ("sst2", "STS-B", "sts_b",
// "mnli"); a task's folder name works too ("diagnostic" for AX); throws listing the tasks. The one
// name rule of the project (glue/glue_tasks.h and metrics/glue_metrics.h too).
const GlueTask& find_glue_task(const std::string& name);
// nullptr when unknown.
const GlueTask* find_glue_task_or_null(const std::string& name);
// The task whose metrics name (GlueTask::metric_task, or a split's: "mnli-mm") or task name is
// `name`, under the same name rule; sets *metric_task to that metrics name ("MNLI-mm" → MNLI,
// "mnli-mm"; "SST2" → SST-2, "sst-2"). Throws listing the tasks for an unknown name.
const GlueTask& find_glue_task_by_metric_name(const std::string& name, std::string* metric_task);
// The test-only tasks whose sets `task`'s model predicts (for MNLI: AX).
std::vector<const GlueTask*> glue_tasks_predicted_by(const std::string& task);

struct GlueExample {
  std::string text_a;
  std::string text_b;       // empty for single-sentence tasks
  int64_t label = -1;       // class index; -1 for regression or unlabelled splits
  double score = std::numeric_limits<double>::quiet_NaN();  // STS-B score; NaN otherwise
  int64_t index = 0;        // test: the id column; else the 0-based data row number
  int64_t line = 0;         // 1-based line in the file (for messages)
  bool has_label() const { return label >= 0 || !std::isnan(score); }
};

struct GlueReadStats {
  int64_t lines = 0;               // lines in the file (incl. header and blank lines)
  int64_t examples = 0;            // examples returned
  int64_t blank_lines = 0;         // empty lines skipped
  int64_t skipped_short_rows = 0;  // QQP train/dev rows with too few columns
  std::vector<int64_t> skipped_lines;  // their 1-based line numbers (first 100)
  std::vector<int64_t> label_counts;   // per class index (classification, labelled splits)
};

struct GlueSplitData {
  std::string task;   // canonical task name
  std::string split;  // split name as in the table
  std::string path;
  std::vector<GlueExample> examples;
  GlueReadStats stats;
};

// Reads `path` in the format of `task`'s `split`.
GlueSplitData read_glue_tsv(const GlueTask& task, const std::string& split, const std::string& path);
// <root>/<task.dir>/<split file>, e.g. glue_tsv_path("glue", "MNLI", "dev_matched").
std::string glue_tsv_path(const std::string& root, const std::string& task, const std::string& split);
// read_glue_tsv(find_glue_task(task), split, glue_tsv_path(root, task, split)).
GlueSplitData read_glue_task_split(const std::string& root, const std::string& task, const std::string& split);

// Label string → class index; throws "<where>: unknown label '<s>' (expected one of: ...)".
int64_t glue_label_index(const GlueTask& task, const std::string& label, const std::string& where);
// Class index → label string; throws for an index out of range.
const std::string& glue_label_name(const GlueTask& task, int64_t index);

// Leaderboard file name of an unlabelled split: CoLA.tsv, SST-2.tsv, MRPC.tsv, STS-B.tsv, QQP.tsv,
// MNLI-m.tsv (test_matched), MNLI-mm.tsv (test_mismatched), QNLI.tsv, RTE.tsv, WNLI.tsv, AX.tsv.
std::string leaderboard_file_name(const std::string& task, const std::string& split);

// Writes a leaderboard file atomically: header "index\tprediction", one row per example in the
// given order. Classification: predictions are class indices (whole numbers in
// [0, num_labels)), written as label strings. STS-B: clipped to [0, 5], 3 decimals. NaN or
// out-of-range predictions and size mismatches throw tisa::Error.
void write_leaderboard_file(const std::string& task, const std::string& split, const std::vector<int64_t>& indices,
                            const std::vector<double>& predictions, const std::string& path);

}  // namespace tisa::data
