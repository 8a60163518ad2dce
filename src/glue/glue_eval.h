// Running a GLUE model over a tokenised split: predictions in data order, the task's metrics on a
// labelled split (SPEC §8; computed by src/metrics), and prediction files in the leaderboard
// format (header `index\tprediction`, label strings, STS-B clipped to [0, 5] with 3 decimals).
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "data/glue_dataset.h"
#include "glue/glue_model.h"
#include "glue/glue_tasks.h"

namespace tisa::glue {

// Class id (as a double) or regression value of every example of `split`, in data order. The
// model is put in eval mode and run without gradients, in length-sorted batches.
std::vector<double> predict_split(GlueModel& model, const data::GlueEncodedSplit& split, int64_t batch_size,
                                  c10::Device device);

// The task's metrics (e.g. {"accuracy", "f1"}) of `predictions` against the split's labels.
// Throws tisa::Error when the split has no labels.
std::map<std::string, double> split_metrics(const GlueTaskInfo& task, const std::vector<double>& predictions,
                                            const data::GlueEncodedSplit& split);

// Leaderboard / prediction file: one row per example with the split's index column.
void write_prediction_file(const std::string& path, const GlueTaskInfo& task, const data::GlueEncodedSplit& split,
                           const std::vector<double>& predictions);

// File in each seed's run folder holding the best model's dev predictions (written by `glue`).
inline constexpr const char* kDevPredictionsFile = "dev_predictions.json";

// One dev split's predictions with their labels, for paired significance tests between variants
// (`tisa-train report`, metrics/significance.h): {"split", "metrics_task", "metrics": [keys],
// "labels": [...], "predictions": [...]} in data order; class ids as numbers, STS-B scores.
nlohmann::json dev_predictions_json(const GlueTaskInfo& task, const data::GlueEncodedSplit& split,
                                    const std::vector<double>& predictions);

}  // namespace tisa::glue
