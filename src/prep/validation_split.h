// Which documents of a corpus form the validation split of `prepare pretrain`. Torch-free.
//
// The split holds out whole documents (no sentence of a validation document is trained on), and
// `fraction` is the share of the corpus *text* held out, not of the document count: corpora mix
// documents of very different sizes — a Gutenberg chapter of 20 kB beside a play collection
// without chapter marks of 1.1 MB — and counting documents let one such document become 85 % of
// the validation set while it was missing from training altogether (the `cpu` paper run measured
// its MLM accuracy mostly on Shakespeare, a text it never trained on).
//
// Rule: documents are visited in the order of their keys CounterRng(seed, split-stream, global
// document index) — deterministic from the seed, independent of threads — and a document is held
// out when it still fits in the budget fraction · total size. A document larger than what is left
// of the budget stays in training. When fraction > 0 and no document fits (every document is
// larger than the budget) the smallest one is held out, so that a validation split exists; the
// caller reports the share that results. At least one document always stays in training.
#pragma once
#include <cstdint>
#include <vector>

namespace tisa::prep {

// sizes[d]: size of document d (bytes of text); returns 1 for the documents held out.
std::vector<uint8_t> choose_validation_documents(const std::vector<int64_t>& sizes, double fraction, uint64_t seed);

}  // namespace tisa::prep
