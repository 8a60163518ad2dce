// `tisa-train prepare pretrain`: tokenise corpus files into the binary pretraining dataset that
// `tisa-train pretrain` memory-maps (SPEC §5; formats in src/prep/corpus_reader.h, dataset layout
// in src/data/pretrain_dataset.h).
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "cli_text/commands.h"
#include "common/cli_checks.h"
#include "common/error.h"
#include "common/output_guard.h"
#include "common/run_directory.h"
#include "prep/prepare_pretrain.h"
#include "text/batch_encode.h"
#include "text/tokenizer.h"

namespace tisa::cli {

// prepare_glue_command.cpp: adds `glue` under `prepare`.
void add_prepare_glue_subcommand(CLI::App& prepare);

namespace {

// The `prepare` subcommand, created by whichever prepare-* file registers first.
CLI::App* prepare_app(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App* a) { return a->get_name() == "prepare"; })) return sub;
  CLI::App* prepare = app.add_subcommand("prepare", "tokenise a corpus or GLUE task into a binary dataset");
  prepare->require_subcommand(1);
  return prepare;
}

struct PretrainArgs {
  std::vector<std::string> inputs;
  std::string tokenizer, output, format = "auto";
  double valid_fraction = 0.01;
  int threads = 0;
  uint64_t seed = 12345;
};

void run_prepare_pretrain(const PretrainArgs& a) {
  std::vector<std::string> inputs = a.inputs;
  inputs.push_back(a.tokenizer);
  check_output_folder_holds_no_input("--output", a.output, inputs);
  // One preparation per folder: two at once would interleave their files (common/run_directory.h).
  const RunDirectory owner(a.output, RunDirectory::Start::kNew, "--output");
  prep::PreparePretrainOptions o;
  o.inputs = a.inputs;
  o.tokenizer_path = a.tokenizer;
  o.output = a.output;
  o.valid_fraction = a.valid_fraction;
  o.format = prep::parse_corpus_format(a.format);
  o.threads = a.threads;
  o.seed = a.seed;
  auto tok = text::load_tokenizer(a.tokenizer);
  spdlog::info("[data] tokenizer {} ({}, {} ids), {} threads", tok->identity(), tok->type(), tok->vocab_size(),
               text::resolve_threads(a.threads));
  const auto r = prep::prepare_pretrain(o, *tok);
  const auto& h = r.header;
  const int64_t tokens = h.train.tokens + h.valid.tokens;
  spdlog::info("[data] wrote {}: train {} documents / {} sentences / {} tokens, valid {} / {} / {} ({})", a.output,
               h.train.documents, h.train.sentences, h.train.tokens, h.valid.documents, h.valid.sentences,
               h.valid.tokens, h.token_dtype);
  spdlog::info("[data] {:.2f} MB of text in {:.2f} s: {:.2f} MB/s, {:.0f} tokens/s", r.input_bytes / 1e6, r.seconds,
               r.input_bytes / 1e6 / r.seconds, tokens / r.seconds);
}

}  // namespace

void add_prepare_command(CLI::App& app) {
  CLI::App* prepare = prepare_app(app);
  auto args = std::make_shared<PretrainArgs>();
  CLI::App* cmd = prepare->add_subcommand(
      "pretrain",
      "tokenise text files into a pretraining dataset folder (header.json + memory-mapped splits)");
  cmd->add_option("--input", args->inputs, "corpus files (UTF-8; BOM and CRLF are fine)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--tokenizer", args->tokenizer, "tokenizer: .model file, vocab.txt or tokenizer folder")->required();
  cmd->add_option("--output", args->output, "dataset folder to write")->required();
  cmd->add_option("--valid-fraction", args->valid_fraction,
                  "share of the text held out as the valid split (whole documents; one larger than the share "
                  "stays in training)")
      ->check(CLI::Range(0.0, 0.99));
  cmd->add_option("--format", args->format,
                  "auto, albert (sentence per line, blank line between documents), wikitext, gutenberg "
                  "(wrapped prose), lines (one document per line)");
  cmd->add_option("--threads", args->threads, "tokenisation threads (0 = all cores)")
      ->check(integer_between(args->threads, 0, 1024));
  cmd->add_option("--seed", args->seed, "seed of the train/valid split")->check(integer_at_least(args->seed, 0));
  cmd->callback([args] { run_prepare_pretrain(*args); });
  add_prepare_glue_subcommand(*prepare);
}

}  // namespace tisa::cli
