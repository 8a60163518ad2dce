// The Hugging Face side of a tokenizer directory: tokenizer_config.json and
// special_tokens_map.json next to spiece.model (AlbertTokenizer) or vocab.txt (BertTokenizer), so
// that `AutoTokenizer.from_pretrained(dir)` — also in a remote-code model directory, whose
// model_type transformers does not know — builds the tokenizer that encodes as ours does
// (lowercasing and accent handling included). Torch-free.
#pragma once
#include <string>

#include "text/tokenizer.h"

namespace tisa::text {

struct HfTokenizerSettings {
  std::string type;       // "sentencepiece" or "wordpiece"
  bool lowercase = true;
  bool keep_accents = false;
  int64_t model_max_length = 512;
};

// tokenizer_config.json text for `tok` (special token strings are its own pieces).
std::string hf_tokenizer_config_json(const Tokenizer& tok, const HfTokenizerSettings& settings);
// special_tokens_map.json text for `tok`.
std::string hf_special_tokens_map_json(const Tokenizer& tok);
// Writes both files into `dir` (atomically).
void write_hf_tokenizer_files(const std::string& dir, const Tokenizer& tok, const HfTokenizerSettings& settings);

}  // namespace tisa::text
