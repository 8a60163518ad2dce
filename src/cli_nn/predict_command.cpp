// `tisa-train predict`: predict labels for any TSV in a GLUE task's format (src/glue/glue_runner.h).
#include <CLI/CLI.hpp>

#include "cli_nn/commands.h"
#include "common/cli_checks.h"
#include "glue/glue_runner.h"

namespace tisa::cli {

void add_predict_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("predict", "predict labels for a TSV of a GLUE task's format");
  auto opt = std::make_shared<glue::PredictOptions>();
  cmd->add_option("--model", opt->model_dir, "fine-tuned model folder")->required();
  cmd->add_option("--input", opt->input, "TSV in the task's train, dev or test format")->required();
  cmd->add_option("--output", opt->output, "predictions TSV (index<TAB>prediction)")->required();
  cmd->add_option("--task", opt->task, "GLUE task (default: the task recorded in the model's config.json)");
  cmd->add_option("--cache-dir", opt->cache_dir, "folder for the tokenised input (default: ~/.cache/tisa-train/glue/...)");
  cmd->add_option("--batch-size", opt->batch_size, "batch size")->check(integer_at_least(opt->batch_size, 1));
  cmd->add_option("--max-length", opt->max_length, "tokens per example (0 = as in fine-tuning)")
      ->check(integer_at_least(opt->max_length, 0));
  cmd->add_option("--device", opt->device, "cpu or cuda")->check(device_name());
  cmd->callback([opt] { glue::run_predict_command(*opt); });
}

}  // namespace tisa::cli
