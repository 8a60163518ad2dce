// Batches of tokenised GLUE examples as tensors: dynamic padding to the longest example of the
// batch, a seeded epoch-wise shuffling sampler for training, and length-sorted batching for
// evaluation (cuts padding; predictions are scattered back to the data order by the caller).
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "data/glue_dataset.h"

namespace tisa::glue {

struct GlueBatch {
  at::Tensor input_ids;       // [B, L] int64, padded with pad_id
  at::Tensor token_type_ids;  // [B, L] int64
  at::Tensor attention_mask;  // [B, L] int64, 1 = real token
  at::Tensor labels;          // [B] int64 (classification) or float32 (regression); undefined if unlabelled
  std::vector<size_t> rows;   // example numbers in the split
};

// Builds one batch of `rows` from `split` on `device`.
GlueBatch make_glue_batch(const data::GlueEncodedSplit& split, const std::vector<size_t>& rows, int64_t pad_id,
                          c10::Device device);

// Endless training order: each epoch is a fresh permutation drawn from a seeded engine, so a run
// with the same seed sees the same batches.
//
// Length grouping (glue.group_by_length): each epoch's permutation is cut into windows of
// `group_window` examples and every window is sorted by length, longest first (stable), so a
// batch holds examples of similar length and pads little — on SST-2 (2–60 tokens) a random
// batch is mostly padding. Windows keep the order random at a coarse scale, as HF's
// group_by_length does with its mega-batches of 50 batches.
class GlueSampler {
 public:
  GlueSampler(size_t examples, uint64_t seed);
  // With length grouping: `lengths[i]` is example i's token count; `group_window` > 0.
  GlueSampler(size_t examples, uint64_t seed, std::vector<int64_t> lengths, size_t group_window);
  std::vector<size_t> next(int64_t batch_size);
  int64_t epoch() const { return epoch_; }

  // Exact resume: where the sampler stands ({"epoch", "index"}), and a return to such a position
  // (the epoch's permutation is re-drawn from the seed). seek() throws tisa::Error on a position
  // outside the data.
  nlohmann::json position() const;
  void seek(const nlohmann::json& position);

 private:
  void reshuffle();
  std::vector<size_t> order_;
  size_t pos_ = 0;
  int64_t epoch_ = 0;
  uint64_t seed_;
  std::mt19937_64 rng_;
  std::vector<int64_t> lengths_;  // empty: no length grouping
  size_t group_window_ = 0;
};

// Evaluation batches: row numbers grouped by similar length (sorted by length, stable), each
// group at most `batch_size` rows.
std::vector<std::vector<size_t>> eval_batches(const data::GlueEncodedSplit& split, int64_t batch_size);

}  // namespace tisa::glue
