// `tisa-train analyze --model DIR --out DIR [--positions N]`: translation-invariance analysis of a
// checkpoint's position terms (SPEC §9, the paper's section 3); see analysis/checkpoint_analysis.h.
#include <CLI/CLI.hpp>

#include <memory>

#include "analysis/checkpoint_analysis.h"
#include "cli_nn/commands.h"
#include "common/cli_checks.h"
#include "common/output_guard.h"

namespace tisa::cli {

void add_analyze_command(CLI::App& app) {
  auto options = std::make_shared<analysis::AnalyzeOptions>();
  auto* cmd = app.add_subcommand(
      "analyze",
      "translation-invariance analysis (paper §3): tau of P·P^T and of the first layer's per-head position "
      "terms, TISA kernels; writes analysis.json and SVG pictures");
  cmd->add_option("--model", options->model_dir, "checkpoint directory (config.json + model.safetensors)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--out", options->out_dir, "output directory (created)")->required();
  cmd->add_option("--positions", options->positions, "leading positions analysed (0 = all rows of the table)")
      ->check(integer_at_least(options->positions, 0));
  cmd->add_flag("!--no-pictures", options->pictures, "write analysis.json only");
  cmd->callback([options] {
    check_output_folder_holds_no_input("--out", options->out_dir, model_folder_inputs(options->model_dir));
    analysis::analyze_checkpoint(*options);
  });
}

}  // namespace tisa::cli
