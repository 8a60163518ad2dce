// Parallel encoding of many texts with one tokenizer (corpus and GLUE preprocessing).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "text/tokenizer.h"

namespace tisa::text {

// ids of each text (Tokenizer::encode, no special tokens), in input order. `threads` <= 0 means
// all hardware threads; work is handed out in small chunks so uneven lines balance. Tokenizers
// are read-only after loading, so one instance is shared by all threads. An exception thrown
// while encoding is rethrown here.
std::vector<std::vector<int32_t>> encode_batch(const Tokenizer& tokenizer, const std::vector<std::string>& texts,
                                               int threads);

// Number of threads encode_batch uses for `threads` (<= 0: hardware concurrency, at least 1).
int resolve_threads(int threads);

}  // namespace tisa::text
