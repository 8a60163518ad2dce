// A run's TensorBoard folder (<run>/tensorboard/; GLUE: <task>/seed-N/tensorboard/), fed by the
// run's MetricsWriter (common/metrics_writer.h) so that every scalar of metrics.jsonl is there:
//   - scalars under "<event>/<key>" (train/loss, eval/mlm_accuracy, final/...), GLUE's dev
//     evaluations as glue/<metric>, τ as analysis/<key>; objects and arrays as tag/key, tag/i;
//   - the resolved config as text (tag "config");
//   - the hparams plugin: the flattened config (plus run.kind) as the session's hyper-parameters,
//     the final/<metric> tags as its metrics, and an Experiment that every run writes the same
//     (all config keys, the final metrics of pretraining and of every GLUE task), so that
//     pretrainings and fine-tunings side by side in one --logdir share one HPARAMS table.
// A resume drops the events of the steps it redoes, then starts a new file with the config text
// and the hparams session of the resumed run (config.yaml as the resume rewrote it), and the
// scalars of the kept metrics.jsonl records that the events lack (a record torn by a crash).
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/metrics_writer.h"
#include "config/config.h"
#include "io/tensorboard_events.h"

namespace tisa::io {
class TensorBoardWriter;
}

namespace tisa::train {

enum class RunKind { kPretraining, kGlue };

// What the folder records beside the scalars.
struct TensorBoardRunInfo {
  RunKind kind = RunKind::kPretraining;
  config::Config config;  // the resolved config (config.yaml): text and hyper-parameters
  // GLUE: the --init model, whose sizes and schemes are the model.* hyper-parameters (the
  // config's model section is not what a fine-tuning trains).
  std::optional<config::ModelConfig> trained_model;
};

// The tag of value `key` of a metrics record of `event`.
std::string scalar_tag(RunKind kind, const std::string& event, const std::string& key);
// The numeric values of a record as scalars (bools and strings are not scalars; JSON null, a
// NaN in metrics.jsonl, is NaN).
std::vector<io::tensorboard::Scalar> record_scalars(RunKind kind, const std::string& event,
                                                    const nlohmann::json& values);
// The hyper-parameters of a run: run.kind, then every config key with its typed value (model.*
// of the trained model).
std::vector<io::tensorboard::HParam> run_hparams(const TensorBoardRunInfo& run);
// The metrics of the hparams Experiment: final/<key> of pretraining and of every GLUE task.
std::vector<std::string> hparams_metric_tags();

class TensorBoardRun : public MetricsSink {
 public:
  // Opens `dir` for a run that starts fresh (resume_step < 0: earlier event files there are
  // removed) or resumes after `resume_step` with `kept` the metrics.jsonl records up to it;
  // writes the config text and the hparams session.
  TensorBoardRun(const std::string& dir, const TensorBoardRunInfo& run, int64_t resume_step,
                 const std::vector<MetricsRecord>& kept = {});
  ~TensorBoardRun() override;

  void record(const std::string& event, int64_t step, const nlohmann::json& values) override;
  // The hparams session ends (status success) at `step`.
  void end_session(int64_t step);

 private:
  RunKind kind_;
  std::unique_ptr<io::TensorBoardWriter> writer_;
};

}  // namespace tisa::train
