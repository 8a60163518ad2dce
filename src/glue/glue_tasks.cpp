// The GLUE task table of the trainer side (see glue_tasks.h; SPEC §8).
#include "glue/glue_tasks.h"

#include <algorithm>
#include <cctype>

#include "common/error.h"
#include "data/glue_tsv.h"

namespace tisa::glue {
namespace {

std::string squash(const std::string& name) {
  std::string out;
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Labels and leaderboard names come from the TSV table (data/glue_tsv.h), so the text side and
// the trainer side cannot disagree about them.
std::vector<GlueTaskInfo> make_tasks() {
  // Main metrics: metrics::glue_compute_metrics key names (transformers 4.30).
  const std::vector<std::pair<const char*, const char*>> kMain = {
      {"CoLA", "mcc"}, {"SST-2", "acc"}, {"MRPC", "acc_and_f1"}, {"STS-B", "corr"}, {"QQP", "acc_and_f1"},
      {"MNLI", "mnli/acc"}, {"QNLI", "acc"}, {"RTE", "acc"}, {"WNLI", "acc"}};
  std::vector<GlueTaskInfo> tasks;
  for (const auto& [name, main] : kMain) {
    const data::GlueTask& src = data::find_glue_task(name);
    GlueTaskInfo t;
    t.name = src.name;
    t.regression = src.regression;
    t.labels = src.labels;
    t.main_metric = main;
    for (const auto& f : src.splits) {
      if (f.label >= 0 && f.name != "train") t.dev_splits.push_back(f.name);
      if (f.label < 0) t.test_splits.push_back({f.name, f.leaderboard});
    }
    // The GLUE diagnostic (AX) is predicted by the MNLI model; it is prepared with MNLI's data.
    if (t.name == "MNLI") t.test_splits.push_back({"diagnostic", data::leaderboard_file_name("AX", "diagnostic")});
    tasks.push_back(std::move(t));
  }
  return tasks;
}

const std::vector<GlueTaskInfo>& tasks() {
  static const std::vector<GlueTaskInfo> kTasks = make_tasks();
  return kTasks;
}

}  // namespace

const GlueTaskInfo& glue_task(const std::string& name) {
  const std::string key = squash(name);
  for (const auto& t : tasks())
    if (squash(t.name) == key) return t;
  std::string known;
  for (const auto& t : tasks()) known += (known.empty() ? "" : ", ") + t.name;
  throw Error("unknown GLUE task '" + name + "' (expected one of: " + known + ")");
}

const std::vector<std::string>& glue_task_names() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> n;
    for (const auto& t : tasks()) n.push_back(t.name);
    return n;
  }();
  return kNames;
}

std::string metrics_task_for_split(const GlueTaskInfo& task, const std::string& split) {
  if (task.name == "MNLI") {
    if (split.find("mismatched") != std::string::npos) return "mnli-mm";
    if (split == "diagnostic") return "ax";
    return "mnli";
  }
  return data::find_glue_task(task.name).metric_task;
}

}  // namespace tisa::glue
