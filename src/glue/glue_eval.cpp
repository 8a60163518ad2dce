// Prediction over tokenised GLUE splits, task metrics and prediction files (see glue_eval.h).
#include "glue/glue_eval.h"

#include <cmath>

#include "common/error.h"
#include "data/glue_tsv.h"
#include "metrics/glue_metrics.h"

namespace tisa::glue {

std::vector<double> predict_split(GlueModel& model, const data::GlueEncodedSplit& split, int64_t batch_size,
                                  c10::Device device) {
  std::vector<double> out(split.size(), 0.0);
  if (split.size() == 0) return out;
  check_split_fits_model(model, split);
  model.train(false);
  torch::NoGradGuard no_grad;
  const int64_t pad_id = model.pad_token_id();
  for (const auto& rows : eval_batches(split, std::max<int64_t>(1, batch_size))) {
    auto batch = make_glue_batch(split, rows, pad_id, device);
    auto logits = model.forward(batch).to(torch::kFloat32).cpu();  // [B, num_labels]
    if (logits.size(1) == 1) {
      auto values = logits.select(1, 0).contiguous();
      const float* p = values.data_ptr<float>();
      for (size_t i = 0; i < rows.size(); ++i) out[rows[i]] = p[i];
    } else {
      auto classes = logits.argmax(1).contiguous();  // [B]
      const int64_t* p = classes.data_ptr<int64_t>();
      for (size_t i = 0; i < rows.size(); ++i) out[rows[i]] = static_cast<double>(p[i]);
    }
  }
  return out;
}

std::map<std::string, double> split_metrics(const GlueTaskInfo& task, const std::vector<double>& predictions,
                                            const data::GlueEncodedSplit& split) {
  if (!split.has_labels) throw Error("the " + task.name + " split '" + split.split + "' has no labels to evaluate");
  TISA_CHECK(predictions.size() == split.size(), "prediction count differs from the split size");
  std::vector<double> labels(split.labels.begin(), split.labels.end());
  auto set = metrics::glue_compute_metrics(metrics_task_for_split(task, split.split), predictions, labels);
  return std::map<std::string, double>(set.values.begin(), set.values.end());
}

void write_prediction_file(const std::string& path, const GlueTaskInfo& task, const data::GlueEncodedSplit& split,
                           const std::vector<double>& predictions) {
  TISA_CHECK(predictions.size() == split.size(), "prediction count differs from the split size");
  // A test-only set this task's model predicts is written as its own task (MNLI's diagnostic
  // split: AX); any other split (test files, or a TSV given to `predict`) in the format of the
  // task's (first) test split.
  for (const data::GlueTask* other : data::glue_tasks_predicted_by(task.name))
    for (const auto& f : other->splits)
      if (f.name == split.split)
        return data::write_leaderboard_file(other->name, f.name, split.indices, predictions, path);
  TISA_CHECK(!task.test_splits.empty(), "task without a test split");
  data::write_leaderboard_file(task.name, task.test_splits.front().split, split.indices, predictions, path);
}

nlohmann::json dev_predictions_json(const GlueTaskInfo& task, const data::GlueEncodedSplit& split,
                                    const std::vector<double>& predictions) {
  TISA_CHECK(predictions.size() == split.size(), "prediction count differs from the split size");
  nlohmann::json keys = nlohmann::json::array();
  for (const auto& [name, value] : split_metrics(task, predictions, split)) keys.push_back(name);
  return {{"split", split.split},
          {"metrics_task", metrics_task_for_split(task, split.split)},
          {"metrics", keys},
          {"labels", std::vector<double>(split.labels.begin(), split.labels.end())},
          {"predictions", predictions}};
}

}  // namespace tisa::glue
