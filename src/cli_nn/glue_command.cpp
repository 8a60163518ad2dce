// `tisa-train glue`: fine-tune and evaluate on one GLUE task or all of them (src/glue/glue_runner.h).
// Exit code 130 after SIGINT/SIGTERM (a checkpoint was saved; continue with --resume).
#include <CLI/CLI.hpp>

#include <spdlog/spdlog.h>

#include <cstdlib>

#include "cli_nn/commands.h"
#include "common/error.h"
#include "glue/glue_runner.h"
#include "glue/seed_summary.h"

namespace tisa::cli {

void add_glue_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("glue", "fine-tune and evaluate on GLUE tasks, write leaderboard files");
  auto opt = std::make_shared<glue::GlueRunOptions>();
  auto seeds = std::make_shared<std::string>();
  cmd->add_option("--task", opt->task, "CoLA, SST-2, MRPC, STS-B, QQP, MNLI, QNLI, RTE, WNLI or all")->required();
  // Required unless --print-config (checked in the callback, with CLI11's usage error).
  cmd->add_option("--data-dir", opt->data_dir, "GLUE folder (one sub-folder per task, official TSV files); required");
  cmd->add_option("--init", opt->init_dir,
                  "model folder to start from (HF format: config.json + model.safetensors + tokenizer file); a "
                  "pretraining model gets a new classifier head, which the fine-tuning trains; required");
  cmd->add_option("--config", opt->config_path,
                  "complete YAML config replacing the task's settings (default: the GLUE task table's ALBERT "
                  "settings over config.h's defaults; see --print-config)");
  cmd->add_flag("--print-config", opt->print_config,
                "print the task's effective settings (YAML, every key; --task all: each task) and exit");
  cmd->add_option("--set", opt->overrides, "override a config key, e.g. --set glue.lr=2e-5 (repeatable)");
  cmd->add_option("--run-dir", opt->run_dir, "output folder (default: runs/glue-<date>-<time>)");
  auto* overwrite =
      cmd->add_flag("--overwrite", opt->overwrite, "replace the results of these tasks already in --run-dir");
  cmd->add_flag("--resume", opt->resume,
                "continue the run in --run-dir (after Ctrl-C or a crash): finished seeds are kept, unfinished "
                "ones continue from their newest checkpoint")
      ->excludes(overwrite);
  auto* seeds_opt =
      cmd->add_option("--seeds", *seeds, "comma-separated distinct seeds, e.g. 1,2,3 (default: training.seed)");
  cmd->callback([opt, seeds, seeds_opt] {
    if (!opt->print_config && opt->data_dir.empty()) throw CLI::RequiredError("--data-dir");
    if (!opt->print_config && opt->init_dir.empty()) throw CLI::RequiredError("--init");
    if (seeds_opt->count() > 0) opt->seeds = glue::parse_seed_list(*seeds);  // a set: duplicates are refused
    int rc = glue::run_glue_command(*opt);
    if (rc == kExitInterrupted) {  // a checkpoint was saved (message logged), as `pretrain` does
      spdlog::default_logger()->flush();
      std::exit(rc);
    }
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace tisa::cli
