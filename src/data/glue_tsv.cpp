// GLUE TSV readers and leaderboard writer (see glue_tsv.h; SPEC §8).
#include "data/glue_tsv.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "common/error.h"
#include "common/fs.h"

namespace tisa::data {
namespace {

// Splits a TAB-separated list of column names.
std::vector<std::string> names(const std::string& tab_separated) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t tab = tab_separated.find('\t', start);
    out.push_back(tab_separated.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return out;
    start = tab + 1;
  }
}

// Shorthands for the table below. `header`: the official header line (GLUE's data as
// distributed by the benchmark and by Hugging Face), TAB-separated; "" = the file has none.
GlueSplitFormat labelled(const char* name, const std::string& header, int columns, int a, int b, int label) {
  GlueSplitFormat f;
  f.name = name;
  f.file = std::string(name) + ".tsv";
  f.header = !header.empty();
  if (f.header) f.header_names = names(header);
  f.columns = columns;
  f.text_a = a;
  f.text_b = b;
  f.label = label;
  return f;
}
GlueSplitFormat unlabelled(const char* name, const std::string& header, int columns, int a, int b,
                           const char* leaderboard) {
  GlueSplitFormat f = labelled(name, header, columns, a, b, -1);
  f.index = 0;
  f.leaderboard = leaderboard;
  return f;
}

// One row of the table: name (= folder), labels (empty: regression), transformers' metric name,
// splits, reported metrics and the main one, ALBERT's defaults. Other fields are set after it.
GlueTask row(const char* name, std::vector<std::string> labels, const char* metric_task,
             std::vector<GlueSplitFormat> splits, std::vector<GlueMetric> metrics, GlueMetric main,
             GlueHyperParameters defaults) {
  GlueTask t;
  t.name = t.dir = name;
  t.regression = labels.empty();
  t.labels = std::move(labels);
  t.metric_task = metric_task;
  t.splits = std::move(splits);
  t.metrics = std::move(metrics);
  t.main = main;
  t.defaults = defaults;
  return t;
}

// The table's own rules: metrics fit the kind of task, the main one is reported; its key is derived.
void check_metrics_and_set_main_key(GlueTask& t) {
  TISA_CHECK(!t.metrics.empty(), t.name + ": no metrics in the task table");
  for (GlueMetric m : t.metrics) {
    TISA_CHECK(glue_metric_on_scores(m) == t.regression, t.name + ": metric " + glue_metric_key(m) +
                                                             (t.regression ? " needs class ids" : " needs scores"));
    const bool binary = m == GlueMetric::kF1 || m == GlueMetric::kAccAndF1;
    TISA_CHECK(!binary || t.labels.size() == 2, t.name + ": binary F1 needs two classes");
  }
  TISA_CHECK(std::find(t.metrics.begin(), t.metrics.end(), t.main) != t.metrics.end(),
             t.name + ": the main metric is not among the task's metrics");
  if (t.trainable()) t.main_metric = t.metric_key(t.main, t.metric_task);
}

std::vector<GlueTask> make_tasks() {
  using M = GlueMetric;
  const std::vector<std::string> binary{"0", "1"};
  const std::vector<std::string> nli3{"contradiction", "entailment", "neutral"};
  const std::vector<std::string> nli2{"entailment", "not_entailment"};
  // Metrics: transformers 4.30's glue_compute_metrics; AX (not in transformers): the GLUE
  // diagnostic's Matthews correlation. Defaults: ALBERT run_glue.sh (google-research/albert
  // @557c37b6) lr, batch size, steps, warmup; WNLI: the ALBERT paper's Table 14.
  std::vector<GlueTask> t;
  // CoLA train/dev: source, label, original label, sentence — no header.
  t.push_back(row("CoLA", binary, "cola",
                  {labelled("train", "", 4, 3, -1, 1), labelled("dev", "", 4, 3, -1, 1),
                   unlabelled("test", "index\tsentence", 2, 1, -1, "CoLA.tsv")},
                  {M::kMcc}, M::kMcc, {1e-5, 16, 5336, 320}));
  const std::string sst2 = "sentence\tlabel";
  t.push_back(row("SST-2", binary, "sst-2",
                  {labelled("train", sst2, 2, 0, -1, 1), labelled("dev", sst2, 2, 0, -1, 1),
                   unlabelled("test", "index\tsentence", 2, 1, -1, "SST-2.tsv")},
                  {M::kAccuracy}, M::kAccuracy, {1e-5, 32, 20935, 1256}));
  // MRPC: Quality, #1 ID, #2 ID, #1 String, #2 String (train/dev start with a BOM).
  const std::string mrpc = "#1 ID\t#2 ID\t#1 String\t#2 String";
  t.push_back(row("MRPC", binary, "mrpc",
                  {labelled("train", "Quality\t" + mrpc, 5, 3, 4, 0), labelled("dev", "Quality\t" + mrpc, 5, 3, 4, 0),
                   unlabelled("test", "index\t" + mrpc, 5, 3, 4, "MRPC.tsv")},
                  {M::kAccuracy, M::kF1, M::kAccAndF1}, M::kAccAndF1, {2e-5, 32, 800, 200}));
  // STS-B: index genre filename year old_index source1 source2 sentence1 sentence2 score.
  const std::string sts = "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2";
  t.push_back(row("STS-B", {}, "sts-b",
                  {labelled("train", sts + "\tscore", 10, 7, 8, 9), labelled("dev", sts + "\tscore", 10, 7, 8, 9),
                   unlabelled("test", sts, 9, 7, 8, "STS-B.tsv")},
                  {M::kPearson, M::kSpearman, M::kCorr}, M::kCorr, {2e-5, 16, 3598, 214}));
  // QQP: id qid1 qid2 question1 question2 is_duplicate; test: id question1 question2. Its
  // train/dev files have a few short rows, skipped as transformers' QqpProcessor does.
  const std::string qqp = "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate";
  t.push_back(row("QQP", binary, "qqp",
                  {labelled("train", qqp, 6, 3, 4, 5), labelled("dev", qqp, 6, 3, 4, 5),
                   unlabelled("test", "id\tquestion1\tquestion2", 3, 1, 2, "QQP.tsv")},
                  {M::kAccuracy, M::kF1, M::kAccAndF1}, M::kAccAndF1, {5e-5, 128, 14000, 1000}));
  t.back().skip_short_rows = true;
  // MNLI: index promptID pairID genre s1_binary_parse s2_binary_parse s1_parse s2_parse sentence1
  // sentence2 label1 [label2..label5 in dev] gold_label; test has the first 10 columns. The
  // mismatched dev set has its own metric names ("mnli-mm/acc") so that both stay apart.
  const std::string mnli = "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\t"
                           "sentence1_parse\tsentence2_parse\tsentence1\tsentence2";
  const std::string mnli_dev = mnli + "\tlabel1\tlabel2\tlabel3\tlabel4\tlabel5\tgold_label";
  GlueSplitFormat dev_mm = labelled("dev_mismatched", mnli_dev, 16, 8, 9, 15);
  GlueSplitFormat test_mm = unlabelled("test_mismatched", mnli, 10, 8, 9, "MNLI-mm.tsv");
  dev_mm.metric_task = test_mm.metric_task = "mnli-mm";
  t.push_back(row("MNLI", nli3, "mnli",
                  {labelled("train", mnli + "\tlabel1\tgold_label", 12, 8, 9, 11),
                   labelled("dev_matched", mnli_dev, 16, 8, 9, 15), dev_mm,
                   unlabelled("test_matched", mnli, 10, 8, 9, "MNLI-m.tsv"), test_mm},
                  {M::kAccuracy}, M::kAccuracy, {3e-5, 128, 10000, 1000}));
  t.back().prefixed_metric_keys = true;
  const std::string qnli = "index\tquestion\tsentence";
  t.push_back(row("QNLI", nli2, "qnli",
                  {labelled("train", qnli + "\tlabel", 4, 1, 2, 3), labelled("dev", qnli + "\tlabel", 4, 1, 2, 3),
                   unlabelled("test", qnli, 3, 1, 2, "QNLI.tsv")},
                  {M::kAccuracy}, M::kAccuracy, {1e-5, 32, 33112, 1986}));
  const std::string pair = "index\tsentence1\tsentence2";  // RTE, WNLI, AX
  t.push_back(row("RTE", nli2, "rte",
                  {labelled("train", pair + "\tlabel", 4, 1, 2, 3), labelled("dev", pair + "\tlabel", 4, 1, 2, 3),
                   unlabelled("test", pair, 3, 1, 2, "RTE.tsv")},
                  {M::kAccuracy}, M::kAccuracy, {3e-5, 32, 800, 200}));
  t.push_back(row("WNLI", binary, "wnli",
                  {labelled("train", pair + "\tlabel", 4, 1, 2, 3), labelled("dev", pair + "\tlabel", 4, 1, 2, 3),
                   unlabelled("test", pair, 3, 1, 2, "WNLI.tsv")},
                  {M::kAccuracy}, M::kAccuracy, {2e-5, 16, 2000, 250}));
  // AX: the diagnostic set (index sentence1 sentence2) in its own folder, test only, predicted
  // with the MNLI model's labels.
  t.push_back(row("AX", nli3, "ax", {unlabelled("diagnostic", pair, 3, 1, 2, "AX.tsv")}, {M::kMcc}, M::kMcc, {}));
  t.back().dir = "diagnostic";
  t.back().predicted_by = "MNLI";
  for (auto& task : t) {
    check_metrics_and_set_main_key(task);
    for (const auto& f : task.splits)  // a header names every column
      TISA_CHECK(!f.header || static_cast<int>(f.header_names.size()) == f.columns,
                 task.name + " " + f.name + ": header table");
  }
  return t;
}

// The one rule for task names: lower case, letters and digits only ("SST-2", "sst2", "sst_2").
std::string squash(const std::string& name) {
  std::string out;
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string task_list() {
  std::string out;
  for (const auto& t : glue_tasks()) out += (out.empty() ? "" : ", ") + t.name;
  return out;
}

std::string location(const std::string& path, int64_t line) { return path + ":" + std::to_string(line); }

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    size_t tab = line.find('\t', start);
    if (tab == std::string_view::npos) {
      fields.push_back(line.substr(start));
      return fields;
    }
    fields.push_back(line.substr(start, tab - start));
    start = tab + 1;
  }
}

bool parse_int64(std::string_view s, int64_t& out) {
  if (s.empty() || s.size() > 19) return false;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  for (size_t j = i; j < s.size(); ++j)
    if (!std::isdigit(static_cast<unsigned char>(s[j]))) return false;
  out = std::strtoll(std::string(s).c_str(), nullptr, 10);
  return true;
}

bool parse_double(std::string_view s, double& out) {
  if (s.empty()) return false;
  std::string text(s);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v)) return false;
  // strtod also accepts hex floats, "inf" and leading spaces; the TSVs hold plain decimals.
  if (text.find_first_of("xXiInN ") != std::string::npos) return false;
  out = v;
  return true;
}

// The header names the task's columns. A header-less file fails here on its first data row
// instead of silently losing it.
void check_header(const std::vector<std::string_view>& fields, const GlueSplitFormat& f, const std::string& where) {
  for (size_t i = 0; i < f.header_names.size(); ++i) {
    if (fields[i] == f.header_names[i]) continue;
    std::string expected;
    for (const auto& n : f.header_names) expected += (expected.empty() ? "" : "<TAB>") + n;
    throw Error(where + ": column " + std::to_string(i + 1) + " of the header is '" + std::string(fields[i]) +
                "', expected '" + f.header_names[i] + "' (the header must be: " + expected +
                "; a file without its header line would lose its first row)");
  }
}

std::string column_names(const GlueSplitFormat& f) {
  std::string out = std::to_string(f.columns) + " tab-separated columns";
  return out;
}

}  // namespace

const std::vector<GlueTask>& glue_tasks() {
  static const std::vector<GlueTask> tasks = make_tasks();
  return tasks;
}

bool GlueTask::trainable() const {
  return std::any_of(splits.begin(), splits.end(), [](const GlueSplitFormat& f) { return f.name == "train"; });
}

const GlueSplitFormat& GlueTask::main_dev_split() const {
  for (const auto& f : splits)
    if (f.label >= 0 && f.name != "train") return f;
  throw Error("GLUE task " + name + " has no labelled evaluation split");
}

std::vector<const GlueTask*> glue_tasks_predicted_by(const std::string& task) {
  std::vector<const GlueTask*> out;
  for (const auto& t : glue_tasks())
    if (!t.predicted_by.empty() && t.predicted_by == task) out.push_back(&t);
  return out;
}

const GlueTask* find_glue_task_or_null(const std::string& name) {
  const std::string key = squash(name);
  for (const auto& t : glue_tasks())
    if (squash(t.name) == key) return &t;
  for (const auto& t : glue_tasks())  // the folder name ("diagnostic" for AX)
    if (squash(t.dir) == key) return &t;
  return nullptr;
}

const GlueTask& find_glue_task_by_metric_name(const std::string& name, std::string* metric_task) {
  const std::string key = squash(name);
  for (const auto& t : glue_tasks())
    for (const auto& f : t.splits)
      if (!f.metric_task.empty() && squash(f.metric_task) == key) {
        *metric_task = f.metric_task;
        return t;
      }
  const GlueTask& t = find_glue_task(name);
  *metric_task = t.metric_task;
  return t;
}

const GlueTask& find_glue_task(const std::string& name) {
  if (const GlueTask* t = find_glue_task_or_null(name)) return *t;
  throw Error("unknown GLUE task '" + name + "' (expected one of: " + task_list() + ")");
}

const std::string& GlueTask::split_metric_task(const GlueSplitFormat& f) const {
  return f.metric_task.empty() ? metric_task : f.metric_task;
}

std::string GlueTask::metric_key(GlueMetric metric, const std::string& metric_task_name) const {
  return (prefixed_metric_keys ? metric_task_name + "/" : std::string()) + glue_metric_key(metric);
}

const char* glue_metric_key(GlueMetric metric) {
  switch (metric) {
    case GlueMetric::kAccuracy: return "acc";
    case GlueMetric::kF1: return "f1";
    case GlueMetric::kAccAndF1: return "acc_and_f1";
    case GlueMetric::kMcc: return "mcc";
    case GlueMetric::kPearson: return "pearson";
    case GlueMetric::kSpearman: return "spearmanr";
    case GlueMetric::kCorr: return "corr";
  }
  throw Error("unknown GlueMetric " + std::to_string(static_cast<int>(metric)));
}

bool glue_metric_on_scores(GlueMetric metric) {
  return metric == GlueMetric::kPearson || metric == GlueMetric::kSpearman || metric == GlueMetric::kCorr;
}

const GlueSplitFormat& GlueTask::split(const std::string& split_name) const {
  for (const auto& s : splits)
    if (s.name == split_name) return s;
  if (!trainable() && splits.size() == 1 && split_name == "test") return splits.front();  // AX
  std::string known;
  for (const auto& s : splits) known += (known.empty() ? "" : ", ") + s.name;
  throw Error("GLUE task " + name + " has no split '" + split_name + "' (expected one of: " + known + ")");
}

int64_t glue_label_index(const GlueTask& task, const std::string& label, const std::string& where) {
  for (size_t i = 0; i < task.labels.size(); ++i)
    if (task.labels[i] == label) return static_cast<int64_t>(i);
  std::string known;
  for (const auto& l : task.labels) known += (known.empty() ? "" : ", ") + l;
  throw Error(where + ": unknown " + task.name + " label '" + label + "' (expected one of: " + known + ")");
}

const std::string& glue_label_name(const GlueTask& task, int64_t index) {
  if (index < 0 || index >= static_cast<int64_t>(task.labels.size()))
    throw Error("GLUE task " + task.name + ": class index " + std::to_string(index) + " out of range [0, " +
                std::to_string(task.labels.size()) + ")");
  return task.labels[static_cast<size_t>(index)];
}

std::string glue_tsv_path(const std::string& root, const std::string& task, const std::string& split) {
  const GlueTask& t = find_glue_task(task);
  return (std::filesystem::path(root) / t.dir / t.split(split).file).string();
}

GlueSplitData read_glue_task_split(const std::string& root, const std::string& task, const std::string& split) {
  return read_glue_tsv(find_glue_task(task), split, glue_tsv_path(root, task, split));
}

GlueSplitData read_glue_tsv(const GlueTask& task, const std::string& split, const std::string& path) {
  const GlueSplitFormat& f = task.split(split);
  GlueSplitData out;
  out.task = task.name;
  out.split = f.name;
  out.path = path;
  if (f.label >= 0 && !task.regression) out.stats.label_counts.assign(task.labels.size(), 0);
  const bool short_rows_skipped = task.skip_short_rows && f.label >= 0;
  const std::string what = task.name + " " + f.name;

  std::string text = fs::read_utf8_text_file(path);
  std::string_view rest(text);
  if (rest.substr(0, 3) == "\xEF\xBB\xBF") rest.remove_prefix(3);  // UTF-8 BOM (MRPC)

  int64_t line_no = 0;
  int64_t data_row = 0;
  bool header_pending = f.header;
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // CRLF
    if (line.empty()) {
      ++out.stats.blank_lines;
      continue;
    }
    std::vector<std::string_view> fields = split_tabs(line);
    const int n = static_cast<int>(fields.size());
    if (header_pending) {
      header_pending = false;
      if (n != f.columns)
        throw Error(location(path, line_no) + ": " + what + ": expected a header with " + column_names(f) + ", got " +
                    std::to_string(n) + " (is this the right task and split?)");
      check_header(fields, f, location(path, line_no) + ": " + what);
      continue;
    }
    if (n != f.columns) {
      if (short_rows_skipped && n < f.columns) {
        ++out.stats.skipped_short_rows;
        if (out.stats.skipped_lines.size() < 100) out.stats.skipped_lines.push_back(line_no);
        continue;
      }
      throw Error(location(path, line_no) + ": " + what + ": expected " + column_names(f) + ", got " +
                  std::to_string(n));
    }
    GlueExample ex;
    ex.line = line_no;
    ex.text_a = std::string(fields[static_cast<size_t>(f.text_a)]);
    if (f.text_b >= 0) ex.text_b = std::string(fields[static_cast<size_t>(f.text_b)]);
    ex.index = data_row;
    if (f.index >= 0) {
      std::string_view id = fields[static_cast<size_t>(f.index)];
      if (!parse_int64(id, ex.index))
        throw Error(location(path, line_no) + ": " + what + ": bad id '" + std::string(id) + "' in column " +
                    std::to_string(f.index + 1) + " (expected an integer)");
    }
    if (f.label >= 0) {
      std::string_view label = fields[static_cast<size_t>(f.label)];
      if (task.regression) {
        if (!parse_double(label, ex.score) || ex.score < 0 || ex.score > 5)
          throw Error(location(path, line_no) + ": " + what + ": bad score '" + std::string(label) + "' in column " +
                      std::to_string(f.label + 1) + " (expected a number from 0 to 5)");
      } else {
        ex.label = glue_label_index(task, std::string(label),
                                    location(path, line_no) + ": " + what + ": column " + std::to_string(f.label + 1));
        ++out.stats.label_counts[static_cast<size_t>(ex.label)];
      }
    }
    out.examples.push_back(std::move(ex));
    ++data_row;
  }
  out.stats.lines = line_no;
  out.stats.examples = static_cast<int64_t>(out.examples.size());
  if (header_pending) throw Error(path + ": " + what + ": empty file (expected a header line)");
  if (out.examples.empty())
    throw Error(path + ": " + what + ": no examples" + (f.header ? " after the header" : "") +
                " (an empty split cannot be trained, evaluated or predicted)");
  return out;
}

std::string leaderboard_file_name(const std::string& task, const std::string& split) {
  const GlueSplitFormat& f = find_glue_task(task).split(split);
  if (f.leaderboard.empty())
    throw Error("GLUE " + find_glue_task(task).name + " " + split +
                " is a labelled split; leaderboard files are written for test splits");
  return f.leaderboard;
}

void write_leaderboard_file(const std::string& task, const std::string& split, const std::vector<int64_t>& indices,
                            const std::vector<double>& predictions, const std::string& path) {
  const GlueTask& t = find_glue_task(task);
  leaderboard_file_name(task, split);  // checks the split is a test split
  if (indices.size() != predictions.size())
    throw Error("leaderboard " + path + ": " + std::to_string(indices.size()) + " indices but " +
                std::to_string(predictions.size()) + " predictions");
  std::string out = "index\tprediction\n";
  char buf[64];
  for (size_t i = 0; i < indices.size(); ++i) {
    const double p = predictions[i];
    if (std::isnan(p)) throw Error("leaderboard " + path + ": prediction " + std::to_string(i) + " is NaN");
    out += std::to_string(indices[i]);
    out += '\t';
    if (t.regression) {
      const double clipped = p <= 0 ? 0.0 : (p >= 5 ? 5.0 : p);  // also maps -0.0 to 0.0
      std::snprintf(buf, sizeof(buf), "%.3f", clipped);
      out += buf;
    } else {
      if (p != std::floor(p) || p < 0 || p >= static_cast<double>(t.labels.size()))
        throw Error("leaderboard " + path + ": prediction " + std::to_string(i) + " (" + std::to_string(p) +
                    ") is not a class index of " + t.name + " [0, " + std::to_string(t.labels.size()) + ")");
      out += glue_label_name(t, static_cast<int64_t>(p));
    }
    out += '\n';
  }
  fs::write_file_atomic(path, out);
}

}  // namespace tisa::data
