// `tisa-train prepare pretrain`: tokenise corpus files into the binary pretraining dataset that
// `tisa-train pretrain` memory-maps (SPEC §5; formats in src/prep/corpus_reader.h, dataset layout
// in src/data/pretrain_dataset.h).
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "cli_text/commands.h"
#include "common/cli_checks.h"
#include "common/error.h"
#include "common/output_guard.h"
#include "common/run_directory.h"
#include "data/pretrain_dataset.h"
#include "prep/corpus_source.h"
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
  std::string tokenizer, output, format = "auto", text_field = "text";
  double valid_fraction = 0.01, max_drop_share = 0.02;
  int64_t valid_max_document_bytes = 1 << 20, shard_tokens = int64_t{1} << 28;
  int threads = 0;
  uint64_t seed = 12345;
};

struct CombineArgs {
  std::vector<std::string> inputs;
  std::string output;
};

void run_prepare_pretrain(const PretrainArgs& a) {
  std::vector<std::string> inputs = prep::expand_inputs(a.inputs);
  inputs.push_back(a.tokenizer);
  check_output_folder_holds_no_input("--output", a.output, inputs);
  // One preparation per folder: two at once would interleave their files (common/run_directory.h).
  const RunDirectory owner(a.output, RunDirectory::Start::kNew, "--output");
  prep::PreparePretrainOptions o;
  o.inputs = a.inputs;
  o.tokenizer_path = a.tokenizer;
  o.output = a.output;
  o.valid_fraction = a.valid_fraction;
  o.valid_max_document_bytes = a.valid_max_document_bytes;
  o.format = prep::parse_corpus_format(a.format);
  o.reader.text_field = a.text_field;
  o.max_drop_share = a.max_drop_share;
  o.shard_tokens = a.shard_tokens;
  o.threads = a.threads;
  o.seed = a.seed;
  auto tok = text::load_tokenizer(a.tokenizer);
  spdlog::info("[data] tokenizer {} ({}, {} ids), {} threads", tok->identity(), tok->type(), tok->vocab_size(),
               text::resolve_threads(a.threads));
  const auto r = prep::prepare_pretrain(o, *tok);
  const auto& h = r.header;
  const int64_t tokens = h.train.tokens + h.valid.tokens;
  spdlog::info("[data] wrote {} ({} shards, {}): train {} documents / {} sentences / {} tokens, valid {} / {} / {} "
               "({}); unk {:.3f} % of tokens",
               a.output, h.shards.size(), h.identity, h.train.documents, h.train.sentences, h.train.tokens,
               h.valid.documents, h.valid.sentences, h.valid.tokens, h.token_dtype,
               tokens ? 100.0 * static_cast<double>(r.unk_tokens) / static_cast<double>(tokens) : 0.0);
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  spdlog::info("[data] {:.2f} MB of text in {:.2f} s: {:.2f} MB/s, {:.0f} tokens/s; peak memory {:.0f} MB",
               r.input_bytes / 1e6, r.seconds, r.input_bytes / 1e6 / r.seconds, tokens / r.seconds,
               static_cast<double>(usage.ru_maxrss) / 1024.0);
}

void run_prepare_combine(const CombineArgs& a) {
  check_output_folder_holds_no_input("--output", a.output, a.inputs);
  const RunDirectory owner(a.output, RunDirectory::Start::kNew, "--output");
  const auto h = data::combine_datasets(a.inputs, a.output);
  spdlog::info("[data] wrote {} ({}): {} shards from {} datasets, train {} documents / {} tokens, valid {} / {}",
               a.output, h.identity, h.shards.size(), a.inputs.size(), h.train.documents, h.train.tokens,
               h.valid.documents, h.valid.tokens);
}

}  // namespace

void add_prepare_command(CLI::App& app) {
  CLI::App* prepare = prepare_app(app);
  auto args = std::make_shared<PretrainArgs>();
  CLI::App* cmd = prepare->add_subcommand(
      "pretrain",
      "tokenise text files into a pretraining dataset folder (header.json + memory-mapped splits)");
  cmd->add_option("--input", args->inputs,
                  "corpus files, folders (every file below, sorted) or globs; UTF-8, plain, gzip or zstd")
      ->required();
  cmd->add_option("--tokenizer", args->tokenizer, "tokenizer: .model file, vocab.txt or tokenizer folder")->required();
  cmd->add_option("--output", args->output, "dataset folder to write")->required();
  cmd->add_option("--valid-fraction", args->valid_fraction,
                  "probability that a document goes to the valid split (decided by its content, so the split is "
                  "the same in shards)")
      ->check(CLI::Range(0.0, 0.99));
  cmd->add_option("--valid-max-document-bytes", args->valid_max_document_bytes,
                  "longer documents always train (keeps one long book from becoming most of the valid text)")
      ->check(integer_at_least(args->valid_max_document_bytes, 1));
  cmd->add_option("--format", args->format,
                  "auto, albert (sentence per line, blank line between documents), wikitext, gutenberg "
                  "(wrapped prose, any number of books), lines (one document per line), jsonl (JSON Lines)");
  cmd->add_option("--text-field", args->text_field, "jsonl: the field holding each document's text");
  cmd->add_option("--max-drop-share", args->max_drop_share,
                  "largest share of a file's text that its format's rules may drop unexplained (an error above)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--shard-tokens", args->shard_tokens, "tokens per shard (a new shard starts at a document end)")
      ->check(integer_at_least(args->shard_tokens, 1));
  cmd->add_option("--threads", args->threads, "tokenisation threads (0 = all cores)")
      ->check(integer_between(args->threads, 0, 1024));
  cmd->add_option("--seed", args->seed, "seed of the train/valid split")->check(integer_at_least(args->seed, 0));
  cmd->callback([args] { run_prepare_pretrain(*args); });
  auto cargs = std::make_shared<CombineArgs>();
  CLI::App* comb = prepare->add_subcommand(
      "combine", "one pretraining dataset from the shards of several (no re-tokenising; same tokenizer)");
  comb->add_option("--input", cargs->inputs, "dataset folders, in order")->required()->check(CLI::ExistingDirectory);
  comb->add_option("--output", cargs->output, "dataset folder to write")->required();
  comb->callback([cargs] { run_prepare_combine(*cargs); });
  add_prepare_glue_subcommand(*prepare);
}

}  // namespace tisa::cli
