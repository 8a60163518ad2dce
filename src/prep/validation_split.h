// Which documents of a corpus form the validation split of `prepare pretrain`. Torch-free.
//
// The split holds out whole documents (no sentence of a validation document is trained on), each
// decided alone from its own content, so that preparation streams (no pass over the corpus
// first) and gives the same split whatever the order, file or shard a document comes in —
// preparing a corpus in one go or in shards and combining them yields the same dataset, and
// duplicated documents land on one side together.
//
// Rule: document d is held out when u(d) < fraction, where u(d) is uniform in [0, 1) from
// CounterRng(seed, split-stream, FNV-1a 64 of its sentences joined by '\n'), and d is at most
// max_document_bytes long. The expected share of text held out is `fraction` of the documents
// that may be held out; the cap keeps a single very long document (a book or play collection
// without chapter marks) from becoming most of the validation text, which would then measure
// MLM accuracy on one text. prepare reports the share that results.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tisa::prep {

struct ValidationSplitRule {
  double fraction = 0.01;
  uint64_t seed = 12345;
  int64_t max_document_bytes = 1 << 20;
};

// FNV-1a 64 of the sentences joined by '\n' (the key of the rule above).
uint64_t document_content_hash(const std::vector<std::string>& sentences);

// True when the document (its content hash and its bytes of text) belongs to the validation split.
bool is_validation_document(const ValidationSplitRule& rule, uint64_t content_hash, int64_t bytes);

}  // namespace tisa::prep
