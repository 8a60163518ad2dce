// Subcommands of tisa-nn (the LibTorch executable), one per file in this folder.
#pragma once

namespace CLI {
class App;
}

namespace tisa::cli {
void add_version_command(CLI::App& app);  // version_command.cpp
void add_glue_command(CLI::App& app);     // glue_command.cpp
void add_eval_command(CLI::App& app);     // eval_command.cpp
void add_predict_command(CLI::App& app);  // predict_command.cpp
void add_analyze_command(CLI::App& app);  // analyze_command.cpp
void add_plot_command(CLI::App& app);     // plot_command.cpp
void add_bench_command(CLI::App& app);    // bench_command.cpp
void add_model_command(CLI::App& app);    // model_command.cpp
void add_pretrain_command(CLI::App& app); // pretrain_command.cpp
void add_eval_mlm_command(CLI::App& app); // eval_mlm_command.cpp
void add_report_command(CLI::App& app);   // report_command.cpp
}  // namespace tisa::cli
