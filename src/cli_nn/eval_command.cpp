// `tisa-train eval`: evaluate a fine-tuned model on a GLUE task's dev set(s) (src/glue/glue_runner.h).
#include <CLI/CLI.hpp>

#include "cli_nn/commands.h"
#include "common/cli_checks.h"
#include "glue/glue_runner.h"

namespace tisa::cli {

void add_eval_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("eval", "evaluate a fine-tuned model on a GLUE dev set");
  auto opt = std::make_shared<glue::EvalOptions>();
  cmd->add_option("--model", opt->model_dir, "fine-tuned model folder (from `tisa-train glue`: <run>/<TASK>/seed-N/best)")
      ->required();
  cmd->add_option("--data-dir", opt->data_dir, "GLUE folder (one sub-folder per task)")->required();
  cmd->add_option("--task", opt->task, "GLUE task (default: the task recorded in the model's config.json)");
  cmd->add_option("--output", opt->output, "metrics JSON file (default: <model>/eval_results.json)");
  cmd->add_option("--cache-dir", opt->cache_dir, "folder for the tokenised data (default: ~/.cache/tisa-train/glue/...)");
  cmd->add_option("--batch-size", opt->batch_size, "evaluation batch size")
      ->check(integer_at_least(opt->batch_size, 1));
  cmd->add_option("--max-length", opt->max_length, "tokens per example (0 = as in fine-tuning)")
      ->check(integer_at_least(opt->max_length, 0));
  cmd->add_option("--device", opt->device, "cpu or cuda")->check(device_name());
  cmd->callback([opt] { glue::run_eval_command(*opt); });
}

}  // namespace tisa::cli
