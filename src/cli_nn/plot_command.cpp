// `tisa-train plot --runs DIR... --out FILE.svg`: loss, accuracy, τ and learning-rate curves of
// one or more runs from their metrics.jsonl (see plot/run_plots.h).
#include <CLI/CLI.hpp>

#include <memory>

#include "cli_nn/commands.h"
#include "common/cli_checks.h"
#include "plot/run_plots.h"

namespace tisa::cli {

void add_plot_command(CLI::App& app) {
  auto options = std::make_shared<plot::PlotRunsOptions>();
  auto* cmd = app.add_subcommand("plot", "draw loss/accuracy/invariance curves of runs (metrics.jsonl) into one SVG");
  cmd->add_option("--runs", options->runs, "run directories (each with metrics.jsonl) or metrics.jsonl files")
      ->required()
      ->expected(1, -1);
  cmd->add_option("--out", options->out, "output SVG file")->required();
  cmd->add_option("--keys", options->keys, "only these panels: key or event:key (e.g. loss eval:mlm_accuracy tau_gram)")
      ->expected(1, -1);
  cmd->add_option("--x", options->x_key, "x axis: step or time")->check(CLI::IsMember({"step", "time"}));
  cmd->add_option("--smooth", options->smooth, "EMA smoothing of train curves (weight of the past, 0 = none)")
      ->check(CLI::Range(0.0, 0.999));
  cmd->add_option("--columns", options->columns, "panels per row")->check(integer_at_least(options->columns, 1));
  cmd->add_option("--title", options->title, "figure title");
  cmd->callback([options] { plot::plot_runs(*options); });
}

}  // namespace tisa::cli
