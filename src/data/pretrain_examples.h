// Pretraining examples (SPEC §5; after google-research/albert create_pretraining_data.py):
// documents of sentences → `[CLS] A [SEP] B [SEP]` with sentence-order labels and whole-word
// n-gram masking. Torch-free.
//
// Index space. Epoch e of a split is a list of "chunks" (runs of consecutive sentences of one
// document), made by the segmentation rule below and then shuffled; example i of epoch e is the
// i-th chunk of that shuffled list, turned into an example. Everything random is drawn from
// counter-based generators keyed by (seed, stream, ...) (data/counter_rng.h), so any (epoch, i)
// can be rebuilt alone, on any thread or rank, after a resume.
//   - segmentation key: (seed, epoch_key, document); order key: (seed, epoch);
//     example key (A/B split, SOP swap, truncation, masking): (seed, epoch_key, chunk id),
//     where chunk id is the chunk's position before shuffling.
//   - dynamic masking: epoch_key = epoch (new chunks and masks every epoch);
//     static masking: epoch_key = epoch % dupe_factor (dupe_factor fixed versions, cycled; each
//     epoch still has its own order).
//
// Segmentation (per document, ALBERT's loop): target = max_seq_length − 3, or with probability
// short_seq_prob a uniform target in [2, max_seq_length − 3]; add sentences until the chunk holds
// ≥ target tokens or the document ends; emit; draw a new target for the next chunk (ALBERT draws
// once per document — a known quirk we do not copy). Chunks of fewer than 2 tokens are dropped.
//
// Example: A = the chunk's first a_end sentences, a_end uniform in [1, n−1] (n ≥ 2 sentences);
// a one-sentence chunk is split at a uniform word start inside it (any position if it has
// none) — ALBERT instead takes B from a random document, which is NSP, not SOP. With probability
// 0.5 A and B are swapped (sop_label 1 = swapped). The pair is truncated to max_seq_length − 3
// (truncate_seq_pair: drop one token from the longer side, front or back with equal probability).
//
// Masking (create_masked_lm_predictions with n-grams): candidates are whole words, i.e. runs of
// pieces starting at a word-start bit (the first piece of a segment always starts a word), never
// special tokens (pad/unk/cls/sep/mask ids); budget = min(max_predictions_per_seq,
// max(1, round_half_even(masked_lm_prob · length))). Repeatedly: draw n ∈ [1, max_ngram] with
// p(n) ∝ 1/n, then take the first word start, in a per-example shuffled order, where n adjacent
// whole words of one segment (no special token between them) fit without overlapping earlier
// choices or exceeding the budget (shorten n when none does). Unlike ALBERT, which draws n per
// start and drops overlapping draws (biasing toward short n-grams), the chosen lengths then
// follow 6/11, 3/11, 2/11 except where the budget forces shorter ones. Each chosen
// piece becomes [MASK] (80%), stays (10%) or becomes a uniform random non-special id (10%).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "data/counter_rng.h"
#include "data/pretrain_dataset.h"

namespace tisa::data {

// How examples are built; filled by the caller (train/ from the config's `data:` section and the
// run's seed), so that src/data does not depend on the config library.
struct ExampleOptions {
  int64_t max_seq_length = 512;
  int64_t max_predictions_per_seq = 20;
  double masked_lm_prob = 0.15;
  double short_seq_prob = 0.1;
  int64_t max_ngram = 3;
  bool static_masking = false;  // false = dynamic (SPEC §5 default)
  int64_t dupe_factor = 10;     // static masking only
  uint64_t seed = 12345;
  void validate() const;  // throws tisa::Error naming the bad field
};

struct PretrainExample {
  std::vector<int32_t> input_ids;        // [CLS] A [SEP] B [SEP], length ≤ max_seq_length
  std::vector<int32_t> token_type_ids;   // 0 for [CLS] A [SEP], 1 for B [SEP]
  std::vector<int32_t> masked_positions; // ascending, ≤ max_predictions_per_seq
  std::vector<int32_t> masked_labels;    // original ids at masked_positions
  int32_t sop_label = 0;                 // 1 = segments swapped
  std::vector<int32_t> ngram_words;      // words in each chosen n-gram (statistics/tests)
  int64_t length() const { return static_cast<int64_t>(input_ids.size()); }
};

// One chunk of consecutive sentences [first_sentence, end_sentence) of one document.
struct Chunk {
  int64_t first_sentence = 0;
  int64_t end_sentence = 0;
  int64_t id = 0;  // position before shuffling (keys the example's random stream)
};

// The shuffled chunks of one epoch (examples in order).
struct EpochPlan {
  int64_t epoch = 0;
  std::vector<Chunk> chunks;
  int64_t size() const { return static_cast<int64_t>(chunks.size()); }
};

class ExampleBuilder {
 public:
  // `split` is "train" or "valid" of `dataset`; the builder keeps the dataset alive.
  ExampleBuilder(std::shared_ptr<const PretrainDataset> dataset, const std::string& split,
                 ExampleOptions options);

  // The plan of an epoch (computed in O(sentences) on first use, a few recent epochs cached).
  // Thread-safe.
  std::shared_ptr<const EpochPlan> plan(int64_t epoch) const;
  int64_t num_examples(int64_t epoch) const { return plan(epoch)->size(); }
  // Example `index` of `epoch`; deterministic, thread-safe.
  PretrainExample build(int64_t epoch, int64_t index) const;
  PretrainExample build(const EpochPlan& plan, int64_t index) const;

  const ExampleOptions& options() const { return options_; }
  const PretrainSplit& split() const { return *split_; }
  const DatasetSpecialIds& special_ids() const { return special_; }
  int64_t vocab_size() const { return vocab_size_; }
  bool is_special(int32_t id) const;

 private:
  std::shared_ptr<const PretrainDataset> dataset_;
  const PretrainSplit* split_;
  ExampleOptions options_;
  DatasetSpecialIds special_;
  int64_t vocab_size_;
  std::vector<int32_t> specials_sorted_;
  mutable std::mutex mutex_;
  mutable std::map<int64_t, std::shared_ptr<const EpochPlan>> plans_;
  int64_t epoch_key(int64_t epoch) const;
  std::shared_ptr<const EpochPlan> make_plan(int64_t epoch) const;
  int32_t random_normal_id(CounterRng& rng) const;
  // The steps of build(), in the order they draw from the example's generator (pretrain_examples.cpp).
  struct SegmentPair;
  struct Word;
  SegmentPair split_chunk(const Chunk& chunk, CounterRng& rng) const;
  void truncate_pair(SegmentPair& pair, CounterRng& rng) const;
  std::vector<int8_t> assemble(const SegmentPair& pair, PretrainExample& ex) const;
  std::vector<Word> whole_words(const PretrainExample& ex, const std::vector<int8_t>& starts) const;
  void mask_ngrams(const std::vector<Word>& words, CounterRng& rng, PretrainExample& ex) const;
};

}  // namespace tisa::data
