// One pretraining update (SPEC §5, §7), reusable by the trainer and `tisa-train bench`: the
// pretraining forward (MLM loss over the masked positions only + SOP loss) run through the shared
// UpdateStep (update_step.h: loss normalised by the masked-token and example counts of the whole
// update over all micro-batches and processes, clipping, NaN/Inf skip, optimiser step). Also the
// evaluation pass (MLM / SOP loss and accuracy on held-out batches).
#pragma once
#include <torch/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "config/config.h"
#include "data/pretrain_loader.h"
#include "model/albert.h"
#include "optim/optimizer.h"
#include "optim/schedule.h"
#include "train/update_step.h"

namespace tisa::train {

class Distributed;      // train/distributed.h
class GradientReducer;

// A batch as tensors on the training device.
struct DeviceBatch {
  torch::Tensor input_ids;         // [B, L] int64
  torch::Tensor token_type_ids;    // [B, L] int64
  torch::Tensor attention_mask;    // [B, L] int64
  torch::Tensor masked_positions;  // [M] int64, flat b·L + t
  torch::Tensor masked_labels;     // [M] int64
  torch::Tensor sop_labels;        // [B] int64
  int64_t num_tokens = 0;          // non-padding tokens
};
DeviceBatch to_device(const data::PretrainBatch& batch, const torch::Device& device);

// Losses of one forward (0-dim float tensors, not yet synced to the host) and correct counts.
struct PretrainLosses {
  torch::Tensor total;        // mlm + sop
  torch::Tensor mlm;          // mean cross-entropy over the masked positions
  torch::Tensor sop;          // mean cross-entropy of the sentence-order head
  torch::Tensor mlm_sum;      // summed cross-entropy over the masked positions
  torch::Tensor sop_sum;      // summed cross-entropy over the examples
  torch::Tensor mlm_correct;  // number of masked positions predicted right (int64, 0-dim)
  torch::Tensor sop_correct;  // number of examples whose order was predicted right
};
// `position_offsets` as in model::ForwardOptions (undefined: rows 0 … L−1). `sparse_final_layer`:
// the final layer only at the positions the heads read (ForwardOptions::head_outputs_only; the
// same losses); false runs it at every position (for comparisons).
PretrainLosses pretraining_losses(model::AlbertForPreTraining& model, const DeviceBatch& batch,
                                  const torch::Tensor& position_offsets = {}, bool sparse_final_layer = true);

// training.position_span: one offset in 0 … span−length per sequence of a micro-batch, a pure
// function of (seed, update, rank, micro-batch, sequence), so a resumed run draws the same ones.
std::vector<int64_t> draw_position_offsets(uint64_t seed, int64_t update, int64_t rank, int64_t micro_batch,
                                           int64_t batch_size, int64_t length, int64_t span);

// How many rows of `logits` [N, C] have their argmax at `labels` [N] (int64, 0-dim): exactly
// logits.argmax(-1).eq(labels).sum(), ties included, without LibTorch 1.13's scalar CPU argmax.
torch::Tensor count_top1_hits(const torch::Tensor& logits, const torch::Tensor& labels);

// The terms of a pretraining update's UpdateResult (update_step.h), in PretrainStep's order.
inline constexpr size_t kMlmTerm = 0;  // MLM: mean over the masked tokens of the whole update
inline constexpr size_t kSopTerm = 1;  // SOP: mean over the examples of the whole update
inline double mlm_loss(const UpdateResult& r) { return r.terms.at(kMlmTerm); }
inline double sop_loss(const UpdateResult& r) { return r.terms.at(kSopTerm); }

class PretrainStep {
 public:
  PretrainStep(model::AlbertForPreTraining model, optim::Optimizer& optimizer, const optim::LrSchedule& schedule,
               double clip_norm, torch::Device device, config::Precision precision);

  // One update from `micro_batches` (one or more; the gradient is that of the mean over every
  // masked token / example of the update, update_step.h). `updates_done` = updates made so far
  // (the schedule's t). The result's terms are {MLM, SOP} (kMlmTerm, kSopTerm); tokens are counted.
  UpdateResult operator()(const std::vector<data::PretrainBatch>& micro_batches, int64_t updates_done);

  // Debugging / tests: called with each micro-batch's loss before backward; may replace it
  // (e.g. multiply by NaN to exercise the bad-step path).
  std::function<void(int64_t updates_done, torch::Tensor& loss)> loss_hook;

  // [dist] data parallelism: when set, the counts are summed over the ranks and the reducer (built
  // with GradientReduction::kSum) sums the gradients, overlapped with the last backward.
  Distributed* dist = nullptr;
  GradientReducer* reducer = nullptr;

  // training.position_span (0 = off) and the seed its offsets are drawn from.
  int64_t position_span = 0;
  uint64_t position_seed = 0;

  // As pretraining_losses' flag (false only for the bench's comparison).
  bool sparse_final_layer = true;

 private:
  model::AlbertForPreTraining model_;
  UpdateStep update_;
  torch::Device device_;
  config::Precision precision_;
};

struct EvalResult {
  double mlm_loss = 0, mlm_accuracy = 0, sop_loss = 0, sop_accuracy = 0;
  int64_t examples = 0, predictions = 0, batches = 0;
};

// Evaluates on the batches of `loader` (not looping) until it is exhausted or `max_batches` (> 0)
// were read. Losses are averaged per masked position (MLM) and per example (SOP) over all
// batches. Runs in eval mode without gradients and restores the previous mode.
EvalResult evaluate(model::AlbertForPreTraining& model, data::PretrainBatchLoader& loader, int64_t max_batches,
                    const torch::Device& device, config::Precision precision);

}  // namespace tisa::train
