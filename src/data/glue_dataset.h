// Tokenised GLUE splits on disk: the contract between `tisa-text prepare glue` (which writes them)
// and `tisa-nn glue/eval/predict` (which read them). Torch-free.
//
// A prepared task is a folder:
//   manifest.json         {"format": "tisa-glue", "version", "task", "cache_key", "max_length",
//                          "tokenizer": {identity, type, vocab_size, pad, cls, sep},
//                          "splits": {name: {"file", "examples", "source", "source_hash"}}}
//   <split>.bin           one file per split (train, dev, test, dev_matched, ..., diagnostic)
//
// <split>.bin layout (little-endian):
//   8 bytes magic "TISAGLUE", u32 version (kGlueSplitVersion), u32 JSON header length J,
//   J bytes JSON {"task","split","examples":N,"tokens":T,"has_labels","regression","max_length",
//                 "tokenizer_identity"},
//   u64 offsets[N+1] (token offsets; offsets[0] = 0, offsets[N] = T),
//   i32 input_ids[T], u8 token_type_ids[T], f32 labels[N] (class id or score; NaN = no label),
//   i64 indices[N] (the TSV's id column for test files, else the data row number),
//   i64 lines[N] (1-based line of the example in its TSV, for error messages).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tisa::data {

inline constexpr uint32_t kGlueSplitVersion = 1;
inline constexpr const char* kGlueManifestName = "manifest.json";

struct GlueEncodedSplit {
  std::string task;                 // canonical name, e.g. "SST-2"
  std::string split;                // "train", "dev", "dev_matched", "test", "diagnostic", ...
  std::string tokenizer_identity;   // Tokenizer::identity() of the tokenizer that made it
  int64_t max_length = 0;
  bool has_labels = false;
  bool regression = false;
  std::vector<uint64_t> offsets{0};  // N+1 token offsets
  std::vector<int32_t> input_ids;    // all examples concatenated, [CLS] a [SEP] (b [SEP])
  std::vector<uint8_t> token_type_ids;
  std::vector<float> labels;         // class id (as float) or regression score; NaN when unlabelled
  std::vector<int64_t> indices;      // id column (test) or data row number (0-based)
  std::vector<int64_t> lines;        // 1-based TSV line

  size_t size() const { return labels.size(); }
  int64_t length(size_t i) const { return static_cast<int64_t>(offsets[i + 1] - offsets[i]); }
  const int32_t* ids(size_t i) const { return input_ids.data() + offsets[i]; }
  const uint8_t* types(size_t i) const { return token_type_ids.data() + offsets[i]; }
  // Appends one example; checks ids/types have the same length.
  void add(const std::vector<int32_t>& ids, const std::vector<int32_t>& types, float label,
           int64_t index, int64_t line);
};

// Writes atomically; throws tisa::Error naming the path on failure.
void write_glue_split(const std::string& path, const GlueEncodedSplit& split);
// Reads and validates (magic, version, sizes); errors name the file and say to re-run
// `tisa-train prepare glue`.
GlueEncodedSplit read_glue_split(const std::string& path);

// The folder's manifest, parsed.
struct GlueManifest {
  std::string task;
  std::string cache_key;
  int64_t max_length = 0;
  std::string tokenizer_identity;
  std::string tokenizer_type;
  int64_t vocab_size = 0;
  int32_t pad_id = 0;
  std::vector<std::string> splits;  // names in the order written
  std::vector<int64_t> examples;    // per split
};
GlueManifest read_glue_manifest(const std::string& dir);
// Path of one split's file inside a prepared folder; throws naming the available splits when the
// split is absent.
std::string glue_split_path(const std::string& dir, const std::string& split);

}  // namespace tisa::data
