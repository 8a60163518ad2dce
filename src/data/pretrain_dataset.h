// Binary pretraining dataset: the contract between `tisa-train prepare pretrain` (tisa-text, which
// writes it) and pretraining in tisa-nn (which memory-maps it). Torch-free. SPEC §5.
//
// A dataset is a folder of shards (format_version 2, what `prepare pretrain` writes):
//   header.json   {"magic": "tisa-pretrain", "format_version": 2, "token_dtype", "tokenizer",
//                  "splits" (totals), "created",
//                  "shards": [{"path": "shards/00000", "identity", "splits"}, ...],
//                  "manifest": {"tokenizer_files": {...}}, "identity": "dataset-<16 hex>"}
//   shards/NNNNN/ one shard each: a format-1 folder as below, without tokenizer files
//   spiece.model | vocab.txt | tisa_tokenizer.json   the tokenizer, once
// The shards' documents, in list order, are the dataset's documents: a shard boundary changes no
// batch, so shards prepared separately and combined (`prepare combine`) train exactly like one
// preparation of the same inputs. Each shard's identity is checked against its own header; the
// dataset's identity hashes the shard list (as below), so it names the data of every shard.
//
// A format-1 folder (one shard; what earlier versions wrote and what a shard is):
//   header.json   {"magic": "tisa-pretrain", "format_version": 1, "token_dtype": "uint16"|"int32",
//                  "tokenizer": {"identity", "type", "vocab_size",
//                                "special_ids": {"pad","unk","cls","sep","mask"}},
//                  "splits": {"train": {"tokens", "sentences", "documents"}, "valid": {...}},
//                  "created": {"by", "version", "time", ... free-form: inputs, format, seed},
//                  "manifest": {"files": {"<split>.<kind>.bin": {"bytes", "fnv1a64"}},
//                               "tokenizer_files": {"spiece.model"|"vocab.txt"|...: fnv1a64}},
//                  "identity": "dataset-<16 hex>"}
// identity is the content identity the trainer records and compares (issue 36): FNV-1a 64 of the
// header without "identity" and without created's by/version/time, so it covers every token file
// (payload hash), the tokenizer files, the counts and the preparation settings; the same corpus
// prepared the same way gets the same identity. A dataset prepared before manifests existed has
// none: its identity is "unrecorded-<hash of header.json>" and its files cannot be verified.
//   <split>.tokens.bin     token ids; uint16 when vocab_size <= 65536, else int32
//   <split>.wordstart.bin  1 bit per token (bit i%8 of byte i/8, LSB first): 1 = the token begins
//                          a word (Tokenizer::is_word_start), used by whole-word masking
//   <split>.sentences.bin  int64 token offsets, sentences+1 entries (first 0, last = tokens)
//   <split>.documents.bin  int64 sentence offsets, documents+1 entries (first 0, last = sentences)
// for split in {train, valid} (valid may be empty: zero documents).
//
// Every .bin file starts with a 32-byte little-endian header:
//   char magic[8] = "TISAPRE1", u32 format_version, u32 element_bytes (2, 4, 8; 1 for bits),
//   u64 count (elements; bits for .wordstart.bin), u64 reserved (0)
// followed by the payload (page-aligned base + 32 keeps every element naturally aligned).
// header.json is written last (atomically), so a crashed preparation leaves no readable dataset;
// each .bin is written as <name>.tmp and renamed, so a reader mapping the old files is unharmed.
// The reader checks magic, version, element size, count against header.json and the exact file
// size (a truncated or padded file is an error naming the file and the command to re-run), the
// identity against the header's content (an edited header.json), and every file of the manifest
// against its hash (a replaced tokenizer or token file).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tisa::data {

inline constexpr const char* kPretrainMagic = "tisa-pretrain";
inline constexpr uint32_t kPretrainFormatVersion = 1;  // a shard and its .bin files
inline constexpr uint32_t kShardedFormatVersion = 2;   // a header.json listing shards
inline constexpr const char* kPretrainHeaderName = "header.json";
inline constexpr const char* kPretrainSplitNames[2] = {"train", "valid"};

// A read-only view of contiguous elements (C++17 has no std::span).
template <typename T>
class Span {
 public:
  Span() = default;
  Span(const T* data, size_t size) : data_(data), size_(size) {}
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](size_t i) const { return data_[i]; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  Span subspan(size_t offset, size_t count) const { return Span(data_ + offset, count); }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};

// Special token ids as recorded in the header (-1 = the vocabulary has none).
struct DatasetSpecialIds {
  int32_t pad = -1, unk = -1, cls = -1, sep = -1, mask = -1;
};

struct DatasetTokenizerInfo {
  std::string identity;  // Tokenizer::identity()
  std::string type;      // "sentencepiece" | "wordpiece"
  int64_t vocab_size = 0;
  DatasetSpecialIds special_ids;
};

struct SplitCounts {
  int64_t tokens = 0, sentences = 0, documents = 0;
};

// One shard as the dataset's header.json lists it.
struct ShardRecord {
  std::string path;      // relative to the dataset folder
  std::string identity;  // the shard header's identity
  SplitCounts train, valid;
};

struct PretrainHeader {
  uint32_t format_version = kPretrainFormatVersion;
  std::string token_dtype;  // "uint16" or "int32"
  DatasetTokenizerInfo tokenizer;
  SplitCounts train, valid;
  nlohmann::json created;  // free-form provenance
  std::string identity;    // "dataset-<hex>", or "unrecorded-<hex>" for a dataset without a manifest
  bool has_manifest = false;
  std::map<std::string, std::string> file_hashes;      // .bin file name → fnv1a64 hex of its payload
  std::map<std::string, std::string> tokenizer_files;  // tokenizer file name → fnv1a64 hex (fs::file_hash_hex)
  std::vector<ShardRecord> shards;                    // format 2 only
  const SplitCounts& counts(const std::string& split) const;
};

// The identity of a header.json's content (see the format above).
std::string dataset_identity(const nlohmann::json& header_json);
// The tokenizer files a dataset or model folder may hold, and the hashes of those present in `dir`.
inline constexpr const char* kTokenizerFileNames[] = {"spiece.model", "vocab.txt", "tisa_tokenizer.json"};
std::map<std::string, std::string> tokenizer_file_hashes(const std::string& dir);

// "uint16" when every id fits (vocab_size <= 65536), else "int32".
std::string token_dtype_for_vocab(int64_t vocab_size);

// One sentence as written: ids and, parallel to them, 1 where a token begins a word.
struct SentenceTokens {
  std::vector<int32_t> ids;
  std::vector<uint8_t> word_start;
};
using DocumentTokens = std::vector<SentenceTokens>;

// Streams documents into a dataset folder. Empty sentences are skipped and documents left empty
// are not counted. finish() writes header.json with the manifest (the tokenizer files must be in
// the folder by then); a writer destroyed without finish() leaves the folder without a header
// (unreadable, by design).
class PretrainDatasetWriter {
 public:
  PretrainDatasetWriter(std::string dir, DatasetTokenizerInfo tokenizer, nlohmann::json created);
  ~PretrainDatasetWriter();
  PretrainDatasetWriter(const PretrainDatasetWriter&) = delete;
  PretrainDatasetWriter& operator=(const PretrainDatasetWriter&) = delete;

  // split: "train" or "valid". Ids must lie in [0, vocab_size).
  void add_document(const std::string& split, const DocumentTokens& document);
  const SplitCounts& counts(const std::string& split) const;
  // Completes the binary files and writes header.json. Returns the header written.
  PretrainHeader finish();

 private:
  struct SplitFiles;
  std::string dir_;
  DatasetTokenizerInfo tokenizer_;
  nlohmann::json created_;
  bool uint16_ = true;
  std::unique_ptr<SplitFiles> splits_[2];
  bool finished_ = false;
  SplitFiles& files(const std::string& split);
};

// Streams documents into a sharded dataset (format 2): shards/00000, 00001, ... each closed once
// it holds at least `shard_tokens` tokens (train + valid), at a document boundary. finish()
// writes header.json (the tokenizer files must be in `dir` by then).
class ShardedDatasetWriter {
 public:
  ShardedDatasetWriter(std::string dir, DatasetTokenizerInfo tokenizer, nlohmann::json created, int64_t shard_tokens);
  ~ShardedDatasetWriter();
  void add_document(const std::string& split, const DocumentTokens& document);
  SplitCounts counts(const std::string& split) const;  // so far, all shards
  PretrainHeader finish();

 private:
  std::string dir_;
  DatasetTokenizerInfo tokenizer_;
  nlohmann::json created_;
  int64_t shard_tokens_;
  std::unique_ptr<PretrainDatasetWriter> shard_;
  std::vector<ShardRecord> shards_;
  SplitCounts totals_[2];
  bool finished_ = false;
  void close_shard();
};

// Writes the header.json of a sharded dataset in `dir` from its shard records (paths relative
// to dir, each holding a complete shard) and returns it; the tokenizer files must be in dir.
PretrainHeader write_sharded_header(const std::string& dir, const DatasetTokenizerInfo& tokenizer,
                                    const std::vector<ShardRecord>& shards, const nlohmann::json& created);

// `prepare combine`: a sharded dataset in `output` holding the shards of every input dataset (of
// either format) in order, hard-linked when the file system allows, else copied; no token is
// re-read or re-tokenised. The inputs must share one tokenizer (identity and files).
PretrainHeader combine_datasets(const std::vector<std::string>& inputs, const std::string& output);

// A read-only memory-mapped file.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Global offsets over the shards of a split, read like the offsets array of one shard:
// view[i] for i in [0, size()).
class OffsetView {
 public:
  struct Part {
    int64_t first = 0;            // global index of the part's first entry
    int64_t base = 0;             // added to every local value
    Span<int64_t> local;          // the shard's offsets (count + 1 entries)
  };
  OffsetView() = default;
  explicit OffsetView(const std::vector<Part>* parts, int64_t size) : parts_(parts), size_(size) {}
  int64_t operator[](int64_t i) const {
    if (parts_->empty()) return 0;  // an empty split: offsets {0}
    const Part& p = part(i);
    return p.base + p.local[static_cast<size_t>(i - p.first)];
  }
  size_t size() const { return static_cast<size_t>(size_); }

 private:
  const std::vector<Part>* parts_ = nullptr;
  int64_t size_ = 0;
  const Part& part(int64_t i) const;
};

// One split of an opened dataset: zero-copy views into the mapped files of its shards, indexed
// globally (tokens, sentences and documents of shard k follow those of shard k − 1).
// Thread-safe (read-only).
class PretrainSplit {
 public:
  int64_t num_tokens() const { return counts_.tokens; }
  int64_t num_sentences() const { return counts_.sentences; }
  int64_t num_documents() const { return counts_.documents; }
  const std::string& name() const { return name_; }
  size_t num_shards() const { return shards_.size(); }

  int32_t token(int64_t i) const {
    const Shard& s = shard_of_token(i);
    const int64_t k = i - s.token_base;
    return s.u16.data() ? static_cast<int32_t>(s.u16[static_cast<size_t>(k)]) : s.i32[static_cast<size_t>(k)];
  }
  bool word_start(int64_t i) const {
    const Shard& s = shard_of_token(i);
    const int64_t k = i - s.token_base;
    return (s.word_bits[k >> 3] >> (k & 7)) & 1;
  }
  // Appends tokens [begin, end) to ids (and their word-start flags to starts when non-null).
  void append_tokens(int64_t begin, int64_t end, std::vector<int32_t>& ids,
                     std::vector<uint8_t>* starts = nullptr) const;

  // sentence_offsets()[s]..[s+1] = token range of sentence s; size sentences+1.
  OffsetView sentence_offsets() const { return OffsetView(&sentence_parts_, counts_.sentences + 1); }
  // document_offsets()[d]..[d+1] = sentence range of document d; size documents+1.
  OffsetView document_offsets() const { return OffsetView(&document_parts_, counts_.documents + 1); }
  int64_t sentence_length(int64_t s) const {
    const OffsetView o = sentence_offsets();
    return o[s + 1] - o[s];
  }

 private:
  friend class PretrainDataset;
  struct Shard {
    int64_t token_base = 0;
    Span<uint16_t> u16;
    Span<int32_t> i32;
    const uint8_t* word_bits = nullptr;
  };
  std::string name_;
  SplitCounts counts_;
  std::vector<std::unique_ptr<MappedFile>> files_;
  std::vector<Shard> shards_;
  std::vector<OffsetView::Part> sentence_parts_, document_parts_;
  const Shard& shard_of_token(int64_t i) const;
};

// An opened dataset folder (either format). Construction validates everything (magic, versions, counts, file
// sizes, offset monotonicity at the ends); errors name the file and say to re-run
// `tisa-train prepare pretrain`.
class PretrainDataset {
 public:
  explicit PretrainDataset(const std::string& dir);
  const PretrainHeader& header() const { return header_; }
  const std::string& dir() const { return dir_; }
  // "train" or "valid".
  const PretrainSplit& split(const std::string& name) const;

 private:
  std::string dir_;
  PretrainHeader header_;
  PretrainSplit train_, valid_;
  // Appends the split `name` of the format-1 folder `dir` (header `h`) to `split`.
  void open_shard_split(PretrainSplit& split, const std::string& dir, const PretrainHeader& h, const std::string& name);
};

// Parses and validates header.json only (for `inspect`-style commands and cheap checks).
PretrainHeader read_pretrain_header(const std::string& dir);

}  // namespace tisa::data
