// tisa-nn — everything that runs a model: pretraining, GLUE, evaluation, analysis, benchmarks.
// Never links SentencePiece: it reads the datasets that tisa-text writes (README, data flow).
// Users normally start it through `tisa-train`, which sets OMP_WAIT_POLICY before LibTorch loads.
#include "cli_main.h"
#include "common/allocator_tuning.h"
#include "cli_nn/commands.h"
#include "model/position/registry.h"
#include "train/runtime_info.h"

int main(int argc, char** argv) {
  tisa::keep_freed_memory_for_reuse();  // no page faults on every step's buffers (allocator_tuning.h)
  tisa::train::flush_denormals_to_zero();  // before any thread starts: they inherit it (runtime_info.h)
  tisa::model::install_position_schemes();  // the config learns the schemes and their settings
  return tisa::cli::run_cli_main("tisa-train", "tisa-train model tools", argc, argv, [](CLI::App& app) {
    tisa::cli::add_version_command(app);
    tisa::cli::add_glue_command(app);
    tisa::cli::add_eval_command(app);
    tisa::cli::add_predict_command(app);
    tisa::cli::add_analyze_command(app);
    tisa::cli::add_plot_command(app);
    tisa::cli::add_bench_command(app);
    tisa::cli::add_model_command(app);
    tisa::cli::add_pretrain_command(app);
    tisa::cli::add_eval_mlm_command(app);
    tisa::cli::add_report_command(app);
  });
}
