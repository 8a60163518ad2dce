// Validation documents by content (see validation_split.h).
#include "prep/validation_split.h"

#include "common/fs.h"
#include "data/counter_rng.h"

namespace tisa::prep {

uint64_t document_content_hash(const std::vector<std::string>& sentences) {
  uint64_t h = fs::fnv1a64("");
  for (size_t i = 0; i < sentences.size(); ++i) {
    if (i > 0) h = fs::fnv1a64("\n", h);
    h = fs::fnv1a64(sentences[i], h);
  }
  return h;
}

bool is_validation_document(const ValidationSplitRule& rule, uint64_t content_hash, int64_t bytes) {
  if (!(rule.fraction > 0) || bytes <= 0 || bytes > rule.max_document_bytes) return false;
  data::CounterRng rng({rule.seed, static_cast<uint64_t>(data::RngStream::kSplit), content_hash});
  return rng.uniform() < rule.fraction;
}

}  // namespace tisa::prep
