// The pretraining run (SPEC §4, §5, §7): from a resolved Config and a run directory to a trained
// HF model directory. Owns the run directory layout:
//   <run>/config.yaml           the resolved config (rewritten on resume)
//   <run>/train.log             everything logged to the console
//   <run>/metrics.jsonl         "train" events every log_interval, "eval" events, a "final" one
//                               (metrics_writer.h)
//   <run>/tensorboard/          the same scalars, config and hparams as TensorBoard events
//                               (training.tensorboard; train/tensorboard_run.h)
//   <run>/checkpoints/step-N/   model.safetensors + config.json, optimizer.safetensors,
//                               training_state.json, manifest.json (train/checkpoint.h)
//   <run>/final/                config.json, model.safetensors, the dataset's tokenizer file
//   <run>/.lock                 held while the run is alive (common/run_directory.h)
// The update itself is PretrainStep (pretrain_step.h) on the shared UpdateStep (update_step.h);
// device, logs, metrics, signals, the NaN policy and checkpoint/resume mechanics are the training
// skeleton's (run_context.h), shared with GLUE fine-tuning. This file adds the data, evaluation
// and what goes into a checkpoint.
#pragma once
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "config/config.h"
#include "train/pretrain_step.h"

namespace tisa::train {

struct PretrainRunOptions {
  std::string run_dir;         // created when missing; owned by the run (common/run_directory.h)
  bool resume = false;         // continue from the newest valid checkpoint in run_dir
  bool overwrite = false;      // a fresh run may delete the run already in run_dir
  std::string init_dir;        // start from the weights of this HF directory (an error with resume)
  bool handle_signals = true;  // install SIGINT/SIGTERM handlers for the run
  bool show_progress = true;
  // Tests and debugging: behave as if SIGINT arrived right after this update (-1 = never).
  int64_t stop_after_step = -1;
  // Peers and debugging: write the initial weights and every update's batch and losses into this
  // new folder (train/batch_dump.h); "" = off. Not with resume.
  std::string dump_batches_dir;
  // Tests and debugging: see PretrainStep::loss_hook.
  std::function<void(int64_t updates_done, torch::Tensor& loss)> loss_hook;
};

struct PretrainRunResult {
  int exit_code = kExitOk;         // kExitInterrupted after a signal (checkpoint saved)
  int64_t step = 0;                // updates done when the run returned
  std::string last_checkpoint;     // newest checkpoint written or resumed from
  std::string final_dir;           // <run>/final, empty when interrupted
  std::vector<double> train_losses;  // loss of every update of this process (NaN when skipped)
  std::optional<EvalResult> last_eval;
};

// Runs (or resumes) pretraining. Throws tisa::Error on bad input, corrupt data, an architecture
// mismatch on resume, a run directory that another process owns or that already holds a run (a
// fresh run without `overwrite`), or after training.max_bad_steps consecutive NaN/Inf losses.
// Fatal errors are also written to <run>/train.log.
PretrainRunResult run_pretraining(const config::Config& cfg, const PretrainRunOptions& options);

// Copies the tokenizer of a pretraining dataset into `dst_dir` (spiece.model or vocab.txt):
// files found in the dataset folder itself, else the path recorded in header.json
// (created.tokenizer_path). Returns the names copied (empty, with a warning, when none found).
std::vector<std::string> copy_dataset_tokenizer(const std::string& dataset_dir, const std::string& dst_dir);

}  // namespace tisa::train
