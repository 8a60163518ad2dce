// The skeleton both training loops run in (issue 16): pretraining (pretrainer.cpp) and GLUE
// fine-tuning (glue/finetune.cpp) hold one RunContext and call one UpdateStep (update_step.h) per
// update, so that each mechanism exists once:
//   - the device (cuda:LOCAL_RANK for ranks of a data-parallel run), threads, deterministic
//     algorithms (bitwise resume on CPU);
//   - <run>/train.log (rank 0; a fatal error is recorded there before it propagates),
//     <run>/metrics.jsonl (rank 0; a resume drops the records past its checkpoint) and, with
//     training.tensorboard, the same scalars, the config and the hparams session as TensorBoard
//     events in <run>/tensorboard/ (train/tensorboard_run.h);
//   - SIGINT/SIGTERM handlers for the run's lifetime (RAII: InterruptScope); the loop saves a
//     checkpoint and returns kExitInterrupted (130);
//   - the NaN/Inf policy: a skipped update counts, training.max_bad_steps in a row stop the run;
//   - checkpoints <run>/checkpoints/step-N/ (checkpoint.h): optimizer.safetensors and
//     training_state.json (step, RNG, NaN counters, the loop's data position) beside the loop's
//     own files, and exact resume from the newest valid one.
// The data-parallel reductions are UpdateStep's (counts, gradients) and data_parallel.h's (step
// results, stop agreement).
#pragma once
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/logging.h"
#include "common/metrics_writer.h"
#include "config/config.h"
#include "optim/optimizer.h"
#include "train/checkpoint.h"
#include "train/interrupt.h"
#include "train/training_state.h"

namespace tisa::train {

class Distributed;
class TensorBoardRun;
struct TensorBoardRunInfo;

// The configured training device (training.device); throws tisa::Error when CUDA is asked for
// but absent. Ranks of a data-parallel run take rank_device() of it (distributed.h).
torch::Device training_device(const config::TrainingConfig& training);

class RunContext {
 public:
  // Claims nothing on disk but <run_dir>/train.log (rank 0) and the checkpoint folder; the run
  // directory's ownership is the caller's (common/run_directory.h). `workers`: data threads
  // (for the oversubscription warning).
  RunContext(std::string run_dir, const config::TrainingConfig& training, Distributed& dist, bool handle_signals,
             int64_t workers = 0);
  ~RunContext();
  RunContext(const RunContext&) = delete;
  RunContext& operator=(const RunContext&) = delete;

  const std::string& run_dir() const { return run_dir_; }
  const torch::Device& device() const { return device_; }
  Distributed& dist() { return dist_; }
  bool is_main() const;
  MetricsWriter& metrics() { return *metrics_; }
  CheckpointStore& checkpoints() { return checkpoints_; }

  // What the TensorBoard folder records beside the scalars (config text, hyper-parameters);
  // call before open_metrics(). Without it, or with training.tensorboard false, none is written.
  void describe_run(const TensorBoardRunInfo& run);
  // Opens metrics.jsonl and <run>/tensorboard/ (rank 0), first dropping the records and events
  // of steps after `resume_step` (>= 0 on resume: those steps are redone).
  void open_metrics(int64_t resume_step = -1);
  // The run's result: a "final" metrics record at `step` (final/<key> in TensorBoard, the hparams
  // table's metrics), then the end of the TensorBoard session.
  void write_final_metrics(int64_t step, const nlohmann::json& values);

  // --resume: the newest valid checkpoint; throws tisa::Error naming the folder and `hint`.
  CheckpointInfo resume_point(const std::string& hint) const;

  // Runs `body` (the run); a fatal error goes into train.log before it propagates (main() prints
  // it once the file sink is gone).
  template <class F>
  auto guard(F&& body) -> decltype(body()) {
    try {
      return body();
    } catch (const std::exception& e) {
      if (log_) log_->record_fatal(e.what());
      throw;
    }
  }

  // The NaN/Inf policy after update `s.step`: an applied update resets the counter; a skipped one
  // is logged (and recorded as a "skipped" metrics event) and counted; max_bad_steps skipped in a
  // row throw tisa::Error naming the key, the last checkpoint and what to try.
  void count_update(TrainingState& s, bool applied, double loss, double grad_norm, int64_t max_bad_steps,
                    const std::string& stage);

  // Writes the checkpoint of `s.step` (rank 0; other ranks return ""): `write_files(dir)` writes
  // the loop's own files (weights, ...), then optimizer.safetensors and training_state.json with
  // the generators' states. Keeps the last `keep_last` and `keep_step`.
  std::string save_checkpoint(TrainingState& s, const optim::Optimizer& optimizer,
                              const std::function<void(const std::string& dir)>& write_files, int64_t keep_last,
                              std::optional<int64_t> keep_step = std::nullopt);
  // Restores the optimiser state, the training state and the generators from checkpoint `dir`.
  TrainingState load_checkpoint(const std::string& dir, optim::Optimizer& optimizer);

  // Newest checkpoint written or resumed from ("" when none).
  const std::string& last_checkpoint() const { return last_checkpoint_; }

 private:
  std::string run_dir_;
  Distributed& dist_;
  torch::Device device_;
  std::optional<logging::RunLogFile> log_;
  bool tensorboard_enabled_ = true;                // training.tensorboard
  std::unique_ptr<TensorBoardRunInfo> tensorboard_run_;  // set by describe_run()
  std::unique_ptr<TensorBoardRun> tensorboard_;    // before metrics_: the writer refers to it
  std::unique_ptr<MetricsWriter> metrics_;
  CheckpointStore checkpoints_;
  InterruptScope signals_;
  std::string last_checkpoint_;
};

}  // namespace tisa::train
