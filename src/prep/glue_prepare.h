// `tisa-train prepare glue`: official GLUE TSV files → tokenised splits (data/glue_dataset.h),
// torch-free. Every split of the task found in the data folder is prepared (train, dev, test;
// MNLI: dev_matched, dev_mismatched, test_matched, test_mismatched, and the GLUE diagnostic AX as
// split "diagnostic" when <data>/diagnostic/diagnostic.tsv, <data>/AX/AX.tsv or <data>/AX.tsv
// exists). Pairs are `[CLS] a [SEP] b [SEP]` with longest-first truncation to max_length (SPEC §6).
//
// Caching: the manifest records a key made of the format version, the task, every input file's
// name and content hash, the tokenizer's identity and options, and max_length. When the output
// folder already holds a manifest with the same key and all its split files, nothing is done.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tisa::prep {

struct GluePrepareOptions {
  std::string task;
  std::string data_dir;  // GLUE root (one folder per task); or
  std::string input;     // one TSV in any of the task's formats → split "input"
  std::string tokenizer;  // .model, vocab.txt or a tokenizer folder
  std::optional<bool> lowercase;
  std::string output;    // folder to write
  int64_t max_length = 128;
  int threads = 0;       // tokenisation threads (0 = all cores)
  bool force = false;    // prepare even when the cache key matches
};

struct GluePrepareReport {
  bool cached = false;  // up to date: nothing written
  std::string cache_key;
  std::vector<std::pair<std::string, int64_t>> splits;  // split name, examples
};

GluePrepareReport prepare_glue(const GluePrepareOptions& options);

}  // namespace tisa::prep
