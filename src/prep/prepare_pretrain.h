// `tisa-train prepare pretrain`: corpus files → tokenised binary pretraining dataset
// (data/pretrain_dataset.h). SPEC §5.
//
// Two passes over the inputs: the first reads every file into documents and measures them; the
// validation documents are then chosen by share of text, whole documents in a seeded order
// (prep/validation_split.h) — deterministic from the seed and independent of threads. The
// second pass re-reads each file, tokenises its sentences in
// parallel (text::encode_batch) and writes the documents in input order.
// Word-start bits come from Tokenizer::is_word_start. Ids of [CLS]/[SEP]/[MASK]/pad produced
// from literal text (e.g. "[MASK]" in a WordPiece corpus) are replaced by unk so that no
// special token ever appears inside a sentence (they are counted).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/pretrain_dataset.h"
#include "prep/corpus_reader.h"

namespace tisa::text {
class Tokenizer;
}

namespace tisa::prep {

struct PreparePretrainOptions {
  std::vector<std::string> inputs;
  std::string tokenizer_path;  // recorded in the header
  std::string output;
  double valid_fraction = 0.01;
  CorpusFormat format = CorpusFormat::kAuto;
  int threads = 0;  // <= 0: all hardware threads
  uint64_t seed = 12345;
};

struct PreparePretrainReport {
  data::PretrainHeader header;
  int64_t input_bytes = 0;
  double seconds = 0;
  int64_t specials_replaced = 0;
  std::vector<std::string> formats;  // format used per input
};

PreparePretrainReport prepare_pretrain(const PreparePretrainOptions& options, const text::Tokenizer& tokenizer);

}  // namespace tisa::prep
