// The `tisa-train glue`, `eval` and `predict` commands behind their CLI files: tokenising GLUE
// data through `tisa-text prepare glue` (a child process; SentencePiece never loads into the
// LibTorch process), per-task settings, several seeds with a mean/std/median summary, `all`
// tasks, leaderboard files of the best seed, and AX from the MNLI model.
//
// Settings of a task, lowest first: config.h's defaults (task-independent: max_length 128,
// weight decay, dropout, ...) < the task table's row (data/glue_tsv.cpp: ALBERT's run_glue.sh lr,
// batch size, steps, warmup) < --set. A --config file takes the place of the table's row
// (defaults < file < --set; give a complete file: start from `tisa-train glue --task T
// --print-config`). The effective settings
// are logged, recorded in <TASK>/results.json ("settings") and in each seed's config.yaml.
//
// Run folder of `glue` (run_dir):
//   <TASK>/data/                prepared (tokenised) data, cached by input hashes
//   <TASK>/seed-<s>/            one fine-tuning (finetune.h: train.log, metrics.jsonl, best/,
//                               checkpoints/, ...)
//   <TASK>/results.json         every seed's metrics + summary (mean, std, median per metric)
//   leaderboard/<TASK>.tsv ...  test predictions of each task's best seed (+ AX.tsv from MNLI)
//   results.json                all tasks: summaries, skipped tasks
//   .lock                       held by the running `glue` (common/run_directory.h)
// A task whose folder already holds results is refused unless `overwrite`; other tasks' folders
// in the same run directory are kept.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/config.h"

namespace tisa::glue {

struct GlueRunOptions {
  std::string task;              // a task name or "all"
  std::string data_dir;          // GLUE folder with one sub-folder per task
  std::string init_dir;          // HF-format model folder
  std::string config_path;       // "" = the task table's settings (see above)
  std::vector<std::string> overrides;  // --set key=value
  std::string run_dir;           // "" = runs/glue-<date>-<time> (a "-N" suffix when taken)
  bool overwrite = false;        // replace a task's earlier results in run_dir
  bool resume = false;           // continue the run in run_dir: finished seeds are kept, unfinished
                                 // ones continue from their newest checkpoint
  std::vector<int64_t> seeds;    // empty = training.seed of the config
  bool print_config = false;     // only print each task's effective settings (YAML) and return
};

// Runs the fine-tunings; returns the process exit code (kExitInterrupted after SIGINT/SIGTERM:
// the interrupted fine-tuning saved a checkpoint, `--resume` continues it).
int run_glue_command(const GlueRunOptions& options);

// Config of one task: config.h defaults < the task table's row < --set, or the --config file <
// --set when `config_path` is given. *source says which.
config::Config task_config(const std::string& task, const std::string& config_path,
                           const std::vector<std::string>& overrides, std::string* source);
// The effective settings of `task` as YAML (every key), with a first comment line naming the source.
std::string describe_task_config(const std::string& task, const std::string& config_path,
                                 const std::vector<std::string>& overrides);

// The task table's row as "key=value" overrides: glue.task, lr, batch_size, steps, warmup_steps.
std::vector<std::string> task_default_overrides(const std::string& task);

// Tasks of `data_dir` that have both a train and a dev file (MNLI: dev_matched).
bool task_data_present(const std::string& data_dir, const std::string& task);

// Runs `tisa-text prepare glue` for `task` into `out_dir` with the tokenizer of `model_dir`.
// `input_tsv` non-empty: prepare that one file (split "input") instead of a data folder.
void prepare_task_data(const std::string& task, const std::string& data_dir, const std::string& input_tsv,
                       const std::string& model_dir, int64_t max_length, const std::string& out_dir);

struct EvalOptions {
  std::string task;       // "" = the task recorded in the model's config.json
  std::string model_dir;
  std::string data_dir;
  std::string output;     // JSON file; "" = <model_dir>/eval_results.json
  std::string cache_dir;  // prepared data; "" = ($XDG_CACHE_HOME or ~/.cache)/tisa-train/glue/<task>-<key>
  int64_t batch_size = 64;
  int64_t max_length = 0;  // 0 = the length recorded by the fine-tuning (else 128)
  std::string device = "cpu";
};
int run_eval_command(const EvalOptions& options);

struct PredictOptions {
  std::string task;
  std::string model_dir;
  std::string input;   // TSV in the task's train/dev/test format
  std::string output;  // TSV: index\tprediction
  std::string cache_dir;
  int64_t batch_size = 64;
  int64_t max_length = 0;
  std::string device = "cpu";
};
int run_predict_command(const PredictOptions& options);

}  // namespace tisa::glue
