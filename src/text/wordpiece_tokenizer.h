// WordPiece tokenizer of BERT (SPEC §6): transformers' BasicTokenizer (clean text, CJK spacing,
// NFC, whitespace split, lowercase + NFD/strip Mn when uncased, punctuation split, the five
// special-token strings kept whole) followed by greedy longest-match-first WordPiece with "##"
// continuations and "[UNK]" for words over 100 characters or without a match.
//
// Written for speed: one pass over the bytes with an ASCII fast path (no decoding, table lookups),
// no allocation per word, and longest-match by walking a byte trie of the vocabulary once per
// piece instead of hashing every candidate substring.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/tokenizer.h"

namespace tisa::text {

struct WordPieceOptions {
  bool lowercase = true;
  // Accents are stripped when lowercasing unless keep_accents (BERT's strip_accents=None); a
  // cased tokenizer never strips them.
  bool keep_accents = false;
  int max_input_chars_per_word = 100;
};

class WordPieceTokenizer final : public Tokenizer {
 public:
  // `vocab[i]` is the token of id i. A token present twice maps to its last id (as transformers'
  // load_vocab does).
  WordPieceTokenizer(std::vector<std::string> vocab, WordPieceOptions options, std::string identity);
  // Reads vocab.txt (one token per line, "\n" or "\r\n"); throws tisa::Error naming the file when
  // it is missing or empty.
  static std::unique_ptr<WordPieceTokenizer> from_file(const std::string& path, WordPieceOptions options);

  std::vector<int32_t> encode(std::string_view text) const override;
  std::vector<std::string> tokenize(std::string_view text) const override;
  // Pieces joined by spaces, "##" continuations glued to the previous piece.
  std::string decode(const std::vector<int32_t>& ids) const override;
  bool is_word_start(int32_t id) const override;
  std::string id_to_piece(int32_t id) const override;
  int64_t vocab_size() const override { return int64_t(vocab_.size()); }
  const SpecialIds& special_ids() const override { return special_; }
  std::string identity() const override { return identity_; }
  std::string type() const override { return "wordpiece"; }
  bool lowercase() const override { return options_.lowercase; }
  bool keep_accents() const override { return options_.keep_accents; }
  const WordPieceOptions& options() const { return options_; }
  // Id of an exact vocabulary token, or -1.
  int32_t token_to_id(std::string_view token) const;

  // Appends the ids of `text` to `out` (encode() without the allocation of a new vector).
  void encode_into(std::string_view text, std::vector<int32_t>& out) const;

 private:
  // Byte trie of vocabulary strings; children of a node are a sorted run of edges.
  struct Trie {
    struct Node {
      int32_t id = -1;
      uint32_t first = 0;  // index into labels_/targets_
      uint32_t count = 0;
    };
    std::vector<Node> nodes;
    std::vector<uint8_t> labels;
    std::vector<uint32_t> targets;
    std::array<uint32_t, 256> root_children{};  // 0 = none (node 0 is the root)
    void build(const std::vector<std::pair<std::string, int32_t>>& entries);
    inline uint32_t child(uint32_t node, uint8_t byte) const;
  };

  void wordpiece(std::string_view word, std::vector<int32_t>& out) const;

  std::vector<std::string> vocab_;
  std::vector<uint8_t> word_start_;
  std::unordered_map<std::string, int32_t> token_ids_;
  WordPieceOptions options_;
  std::string identity_;
  SpecialIds special_;
  Trie initial_, continuation_;
};

}  // namespace tisa::text
