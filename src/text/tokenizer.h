// The tokenizer interface shared by SentencePiece (ALBERT) and WordPiece (BERT), and what the
// rest of the text side (corpus and GLUE preparation) relies on. Torch-free.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tisa::text {

// Ids of the special tokens; -1 where a vocabulary lacks one.
struct SpecialIds {
  int32_t pad = -1;
  int32_t unk = -1;
  int32_t cls = -1;
  int32_t sep = -1;
  int32_t mask = -1;
};

// `[CLS] A [SEP] B [SEP]` with token types, after longest-first truncation (SPEC §6).
struct PairEncoding {
  std::vector<int32_t> input_ids;
  std::vector<int32_t> token_type_ids;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Ids of `text` without special tokens (the form of `tok.encode(text, add_special_tokens=False)`).
  virtual std::vector<int32_t> encode(std::string_view text) const = 0;
  // Pieces of `text` (the form of `tok.tokenize(text)`), parallel to encode().
  virtual std::vector<std::string> tokenize(std::string_view text) const = 0;
  // Text of the ids, joining pieces as the tokenizer's convention says.
  virtual std::string decode(const std::vector<int32_t>& ids) const = 0;

  // True when `id` begins a new word (SentencePiece: piece starts with U+2581; WordPiece: piece
  // does not start with "##"). Whole-word n-gram masking groups pieces by this (SPEC §5).
  virtual bool is_word_start(int32_t id) const = 0;
  virtual std::string id_to_piece(int32_t id) const = 0;
  virtual int64_t vocab_size() const = 0;
  virtual const SpecialIds& special_ids() const = 0;
  // A short stable identity of the vocabulary and options (type + content hash); datasets and
  // caches record it so that data made by another tokenizer is detected.
  virtual std::string identity() const = 0;
  // "sentencepiece" or "wordpiece".
  virtual std::string type() const = 0;
  // The normalisation it was loaded with (what a Hugging Face export must reproduce).
  virtual bool lowercase() const = 0;
  virtual bool keep_accents() const = 0;

  // [CLS] a [SEP] (b [SEP]) with longest-first truncation to max_length (ties cut text b).
  PairEncoding encode_pair(std::string_view a, std::string_view b, int64_t max_length) const;
  PairEncoding encode_single(std::string_view a, int64_t max_length) const;
  // The same from ids already encoded (no special tokens); truncates copies of them.
  PairEncoding build_pair(std::vector<int32_t> a, std::vector<int32_t> b, int64_t max_length) const;
  PairEncoding build_single(std::vector<int32_t> a, int64_t max_length) const;
};

// Options of load_tokenizer(); unset values come from the tokenizer directory's
// tisa_tokenizer.json, else from the defaults of albert-base-v2 / bert-base-uncased
// (lowercase on, accents stripped).
struct TokenizerOptions {
  std::optional<bool> lowercase;
  std::optional<bool> keep_accents;
};

// Name of the small JSON file that describes a tokenizer directory:
// {"type", "file", "lowercase", "keep_accents", "vocab_size", "special_ids": {...}}.
inline constexpr const char* kTokenizerJson = "tisa_tokenizer.json";

// Loads a tokenizer from a SentencePiece `.model` file, a WordPiece `vocab.txt` (any file that is
// not a .model is read as one token per line), or a directory holding tisa_tokenizer.json (or,
// without it, exactly one *.model or a vocab.txt). Throws tisa::Error naming the file when it is
// missing, empty or corrupt.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path, const TokenizerOptions& options = {});

}  // namespace tisa::text
