// SentencePiece tokenizer of ALBERT (SPEC §6) over the SentencePiece library: transformers'
// AlbertTokenizer preprocessing (Python-whitespace collapse, `` and '' -> ", NFKD and drop
// combining marks unless keep_accents, Python lowercase), the model's own encoding into pieces,
// then ALBERT's digit-comma rule; pieces missing from the vocabulary map to <unk>.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "text/tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace tisa::text {

struct SentencePieceOptions {
  bool lowercase = true;
  bool keep_accents = false;
};

// The text normalisation AlbertTokenizer.preprocess_text applies before SentencePiece (also used
// on the training sentences, so that training sees what encoding will see).
std::string albert_preprocess(std::string_view text, const SentencePieceOptions& options);

class SentencePieceTokenizer final : public Tokenizer {
 public:
  // Loads a .model file; throws tisa::Error naming it when it is missing, empty or corrupt.
  static std::unique_ptr<SentencePieceTokenizer> from_file(const std::string& path, SentencePieceOptions options);
  ~SentencePieceTokenizer() override;

  std::vector<int32_t> encode(std::string_view text) const override;
  std::vector<std::string> tokenize(std::string_view text) const override;
  // SentencePiece's detokenisation of the pieces (U+2581 -> space); special tokens are written as
  // their piece strings ("[CLS]"), padding is dropped.
  std::string decode(const std::vector<int32_t>& ids) const override;
  bool is_word_start(int32_t id) const override;
  std::string id_to_piece(int32_t id) const override;
  int64_t vocab_size() const override;
  const SpecialIds& special_ids() const override { return special_; }
  std::string identity() const override { return identity_; }
  std::string type() const override { return "sentencepiece"; }
  bool lowercase() const override { return options_.lowercase; }
  bool keep_accents() const override { return options_.keep_accents; }
  const SentencePieceOptions& options() const { return options_; }
  int32_t piece_to_id(std::string_view piece) const;

 private:
  SentencePieceTokenizer() = default;
  std::vector<std::string> pieces_of(std::string_view text) const;

  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
  SentencePieceOptions options_;
  SpecialIds special_;
  std::string identity_, path_;
  std::vector<uint8_t> word_start_;
};

}  // namespace tisa::text
