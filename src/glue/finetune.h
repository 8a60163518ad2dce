// GLUE fine-tuning of one task with one seed (SPEC §7, §8): AdamW (decay not on LayerNorm/bias),
// HF linear warmup/decay, global-norm clipping, classifier dropout; dev evaluation every
// glue.eval_interval steps (0 = once per epoch) and at the end; the best model by the task's main
// metric is kept as an HF folder; at the end the best model predicts every test split into
// leaderboard files. Runs on the training skeleton of pretraining (train/run_context.h,
// train/update_step.h): glue.batch_size examples per update over all processes, split into
// training.accumulation micro-batches per process, the loss normalised by the examples of the
// whole update; checkpoints every training.checkpoint_interval steps and at the end, exact resume,
// and kExitInterrupted (130) after SIGINT/SIGTERM (a checkpoint saved). Writes into `run_dir`:
//   train.log, metrics.jsonl (events "train", "eval"), config.yaml (resolved), results.json,
//   best/ (HF folder with the task recorded), leaderboard/<TASK>.tsv ...,
//   checkpoints/step-N/ (weights.safetensors, optimizer.safetensors, training_state.json,
//   glue_state.json: evaluations so far and the best step)
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "config/config.h"
#include "glue/glue_tasks.h"

namespace tisa::glue {

struct FinetuneRequest {
  std::string task;          // canonical name
  std::string prepared_dir;  // output of `tisa-text prepare glue`
  std::string init_dir;      // HF-format model folder
  config::Config config;     // glue, optimizer (betas, eps, clip_norm) and training (device, ...) sections
  int64_t seed = 1;
  std::string run_dir;
  bool resume = false;          // continue from the newest valid checkpoint in run_dir/checkpoints
  bool handle_signals = true;   // SIGINT/SIGTERM: checkpoint and return kExitInterrupted
};

struct FinetuneResult {
  int exit_code = kExitOk;  // kExitInterrupted after a signal (checkpoint saved, nothing else written)
  std::string task;
  int64_t seed = 0;
  int64_t best_step = 0;
  std::string main_metric;
  std::map<std::string, double> metrics;  // flattened dev metrics of the best model
  std::string best_dir;                   // run_dir/best
  std::vector<std::string> leaderboard_files;
};

FinetuneResult run_finetune(const FinetuneRequest& request);

// The result of a finished fine-tuning, from its results.json (nullopt when it did not finish).
std::optional<FinetuneResult> read_finetune_result(const std::string& run_dir);

// Steps of a run: glue.steps, or ceil(epochs · examples / batch_size) when it is 0.
int64_t resolve_glue_steps(const config::GlueConfig& glue, int64_t train_examples);
// Warmup: glue.warmup_steps, or ceil(steps · warmup_fraction) when it is 0.
int64_t resolve_glue_warmup(const config::GlueConfig& glue, int64_t steps);

}  // namespace tisa::glue
