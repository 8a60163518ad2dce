// Subcommands of tisa-text (the torch-free text executable), one per file in this folder.
#pragma once

namespace CLI {
class App;
}

namespace tisa::cli {
// Each adds its subcommand (with its own sub-subcommands) to `app`.
// (commands are added here as they land: add_tokenizer_command, add_prepare_command, ...)
void add_tokenizer_command(CLI::App& app);  // tokenizer_command.cpp
void add_prepare_command(CLI::App& app);    // prepare_command.cpp (prepare pretrain; prepare glue may join it)
// Adds `glue` under the `prepare` subcommand (prepare_glue_command.cpp).
void add_prepare_glue_subcommand(CLI::App& prepare);
}  // namespace tisa::cli
