// `tisa-train prepare glue`: tokenise a GLUE task's TSV files into a binary dataset
// (src/prep/glue_prepare.h). A sub-subcommand of `prepare`, added to it by
// add_prepare_glue_subcommand().
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

#include "cli_text/commands.h"
#include "common/cli_checks.h"
#include "common/error.h"
#include "common/output_guard.h"
#include "prep/glue_prepare.h"

namespace tisa::cli {

void add_prepare_glue_subcommand(CLI::App& prepare) {
  auto* cmd = prepare.add_subcommand("glue", "tokenise a GLUE task's TSV files (every split present) into a dataset");
  auto opt = std::make_shared<prep::GluePrepareOptions>();
  auto lowercase = std::make_shared<std::string>();
  cmd->add_option("--task", opt->task, "CoLA, SST-2, MRPC, STS-B, QQP, MNLI (with AX), QNLI, RTE or WNLI")->required();
  cmd->add_option("--data-dir", opt->data_dir, "GLUE folder with one sub-folder per task");
  cmd->add_option("--input", opt->input, "one TSV in any of the task's formats instead of --data-dir (split 'input')");
  cmd->add_option("--tokenizer", opt->tokenizer, "SentencePiece .model, WordPiece vocab.txt or a tokenizer folder")
      ->required();
  cmd->add_option("--lowercase", *lowercase, "true or false (default: the tokenizer's own setting)");
  cmd->add_option("--output", opt->output, "output folder (manifest.json + <split>.bin)")->required();
  cmd->add_option("--max-length", opt->max_length, "tokens per example incl. [CLS]/[SEP]")
      ->check(integer_at_least(opt->max_length, 1));
  cmd->add_option("--threads", opt->threads, "tokenisation threads (0 = all cores)")
      ->check(integer_between(opt->threads, 0, 1024));
  cmd->add_flag("--force", opt->force, "prepare even when the output is up to date");
  cmd->callback([opt, lowercase] {
    if (opt->data_dir.empty() == opt->input.empty())
      throw Error("prepare glue: give exactly one of --data-dir and --input");
    if (*lowercase == "true" || *lowercase == "1") {
      opt->lowercase = true;
    } else if (*lowercase == "false" || *lowercase == "0") {
      opt->lowercase = false;
    } else if (!lowercase->empty()) {
      throw Error("--lowercase: expected true or false, got '" + *lowercase + "'");
    }
    check_output_folder_holds_no_input("--output", opt->output, {opt->data_dir, opt->input, opt->tokenizer});
    auto report = prep::prepare_glue(*opt);
    for (const auto& [split, n] : report.splits) std::printf("%s\t%lld\n", split.c_str(), static_cast<long long>(n));
    std::fflush(stdout);
  });
}

}  // namespace tisa::cli
