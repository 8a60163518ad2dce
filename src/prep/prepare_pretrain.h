// `tisa-train prepare pretrain`: corpus files → tokenised binary pretraining dataset
// (data/pretrain_dataset.h). SPEC §5.
//
// One streaming pass: each input (files, folders, globs: prep/corpus_source.h; gzip/zstd read
// as they stream) is parsed into documents (prep/corpus_reader.h); every ~4 MB of documents is
// tokenised in parallel (text::encode_batch) and written in input order into shards
// (data::ShardedDatasetWriter). Each document goes to train or valid by its own content
// (prep/validation_split.h), so memory stays bounded whatever the corpus size and a corpus
// prepared in parts and combined gives the same dataset as one preparation.
// Word-start bits come from Tokenizer::is_word_start. Ids of [CLS]/[SEP]/[MASK]/pad produced
// from literal text (e.g. "[MASK]" in a WordPiece corpus) are replaced by unk so that no
// special token ever appears inside a sentence (they are counted).
// Nothing is lost silently: every file's report says what it read, kept and dropped and why; a
// file whose format drops more than max_drop_share of its text beyond Project Gutenberg headers
// and licences (headings, titles) is an error naming it: it is probably not in that format.
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
  std::vector<std::string> inputs;  // files, folders or globs (expand_inputs)
  std::string tokenizer_path;       // recorded in the header
  std::string output;
  double valid_fraction = 0.01;
  int64_t valid_max_document_bytes = 1 << 20;  // longer documents always train (validation_split.h)
  CorpusFormat format = CorpusFormat::kAuto;
  ReaderOptions reader;
  int threads = 0;  // <= 0: all hardware threads
  uint64_t seed = 12345;
  int64_t shard_tokens = int64_t{1} << 28;  // a new shard once one holds this many tokens
  double max_drop_share = 0.02;             // of a file's text, dropped beyond headers and licences
};

struct PreparePretrainReport {
  data::PretrainHeader header;
  int64_t input_bytes = 0;
  double seconds = 0;
  int64_t specials_replaced = 0;
  int64_t sentences_without_tokens = 0;  // sentences the tokenizer turned into no ids (not written)
  int64_t unk_tokens = 0;
  std::vector<ReadReport> files;  // one per input file, in order
};

PreparePretrainReport prepare_pretrain(const PreparePretrainOptions& options, const text::Tokenizer& tokenizer);

}  // namespace tisa::prep
