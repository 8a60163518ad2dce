// The trainer side's view of the GLUE task table (see glue_tasks.h; SPEC §8). Every fact comes
// from the one table in data/glue_tsv.cpp, so the text side and the trainer side cannot disagree.
#include "glue/glue_tasks.h"

#include "common/error.h"
#include "data/glue_tsv.h"

namespace tisa::glue {
namespace {

std::vector<GlueTaskInfo> make_tasks() {
  std::vector<GlueTaskInfo> tasks;
  for (const data::GlueTask& src : data::glue_tasks()) {
    if (!src.trainable()) continue;  // AX: predicted by another task's model (predicted_by)
    GlueTaskInfo t;
    t.name = src.name;
    t.regression = src.regression;
    t.labels = src.labels;
    t.main_metric = src.main_metric;
    for (const auto& f : src.splits) {
      if (f.label >= 0 && f.name != "train") t.dev_splits.push_back(f.name);
      if (f.label < 0) t.test_splits.push_back({f.name, f.leaderboard});
    }
    // Test-only sets predicted by this task's model (MNLI: the diagnostic AX), prepared with its data.
    for (const data::GlueTask* other : data::glue_tasks_predicted_by(src.name))
      for (const auto& f : other->splits)
        if (f.label < 0) t.test_splits.push_back({f.name, f.leaderboard});
    tasks.push_back(std::move(t));
  }
  return tasks;
}

const std::vector<GlueTaskInfo>& tasks() {
  static const std::vector<GlueTaskInfo> kTasks = make_tasks();
  return kTasks;
}

std::string trainable_list() {
  std::string known;
  for (const auto& t : tasks()) known += (known.empty() ? "" : ", ") + t.name;
  return known;
}

}  // namespace

const GlueTaskInfo& glue_task(const std::string& name) {
  // The table's name rule (data::find_glue_task_or_null), then the trainable tasks.
  if (const data::GlueTask* src = data::find_glue_task_or_null(name))
    for (const auto& t : tasks())
      if (t.name == src->name) return t;
  throw Error("unknown GLUE task '" + name + "' (expected one of: " + trainable_list() + ")");
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
  const data::GlueTask& src = data::find_glue_task(task.name);
  for (const auto& f : src.splits)
    if (f.name == split) return src.split_metric_task(f);
  for (const data::GlueTask* other : data::glue_tasks_predicted_by(src.name))  // MNLI's "diagnostic": AX
    for (const auto& f : other->splits)
      if (f.name == split) return other->split_metric_task(f);
  return src.metric_task;
}

}  // namespace tisa::glue
