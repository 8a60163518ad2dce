// tisa-text — tokenizers, tokenizer training and corpus/GLUE preprocessing.
// Never links LibTorch: its output is binary datasets that tisa-nn reads (README, data flow).
#include "cli_main.h"
#include "cli_text/commands.h"

int main(int argc, char** argv) {
  return tisa::cli::run_cli_main("tisa-train", "tisa-train text tools: tokenizers and data preparation",
                                 argc, argv, [](CLI::App& app) {
                                   tisa::cli::add_tokenizer_command(app);
                                   tisa::cli::add_prepare_command(app);
                                 });
}
