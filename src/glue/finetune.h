// GLUE fine-tuning of one task with one seed (SPEC §7, §8): AdamW (decay not on LayerNorm/bias),
// HF linear warmup/decay, global-norm clipping, classifier dropout; dev evaluation every
// glue.eval_interval steps (0 = once per epoch) and at the end; the best model by the task's main
// metric is kept as an HF folder; at the end the best model predicts every test split into
// leaderboard files. Writes into `run_dir`:
//   train.log, metrics.jsonl (events "train", "eval"), config.yaml (resolved), results.json,
//   best/ (HF folder with the task recorded), leaderboard/<TASK>.tsv ...
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

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
};

struct FinetuneResult {
  std::string task;
  int64_t seed = 0;
  int64_t best_step = 0;
  std::string main_metric;
  std::map<std::string, double> metrics;  // flattened dev metrics of the best model
  std::string best_dir;                   // run_dir/best
  std::vector<std::string> leaderboard_files;
};

FinetuneResult run_finetune(const FinetuneRequest& request);

// Steps of a run: glue.steps, or ceil(epochs · examples / batch_size) when it is 0.
int64_t resolve_glue_steps(const config::GlueConfig& glue, int64_t train_examples);
// Warmup: glue.warmup_steps, or ceil(steps · warmup_fraction) when it is 0.
int64_t resolve_glue_warmup(const config::GlueConfig& glue, int64_t steps);

}  // namespace tisa::glue
