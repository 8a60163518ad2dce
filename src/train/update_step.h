// One optimiser update, shared by pretraining (pretrain_step.h) and GLUE fine-tuning
// (glue/finetune.cpp): the "update step" of the training skeleton (run_context.h).
//
// Exact global batch (issue 16). Every loss term (MLM, SOP, classification) is a SUM over its
// items (masked tokens, examples) divided by the number of such items in the whole update: all
// micro-batches of all processes. The counts are known from the host batches before any forward
// pass and are summed over the processes in one collective. The data-parallel reduction then
// SUMS the gradients (GradientReduction::kSum): each process's gradient is already its share of
// the global mean. Hence accumulation a × batch b ≡ 1 × batch a·b ≡ a processes × batch b,
// whatever each micro-batch holds (HF transformers normalises the same way since 2024).
//
// After the backward passes: global-norm clipping, the NaN/Inf check (a bad update is skipped,
// the policy that counts them is run_context.h's) and the optimiser step with the schedule's
// learning rate for `updates_done`.
#pragma once
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "optim/optimizer.h"
#include "optim/schedule.h"

namespace tisa::train {

class Distributed;
class GradientReducer;

// What one update did, as host numbers (one sync per update): the one result type of both
// training loops (pretraining names its terms in pretrain_step.h). `loss`, `terms` and `tokens`
// are this process's shares: summed over the processes (reduce_update_result, data_parallel.h)
// they are the losses and token count of the whole update.
struct UpdateResult {
  bool applied = false;       // false: NaN/Inf loss or gradient norm, the update was skipped
  double loss = 0;            // Σ of the terms
  std::vector<double> terms;  // per term: Σ of its item losses here / items of the whole update
  double grad_norm = 0;       // global norm before clipping (the same on every process)
  double lr = 0;              // learning rate of this update
  int64_t tokens = 0;         // non-padding tokens of the micro-batches, when the caller counts them
};

class UpdateStep {
 public:
  // Sums of each term's item losses of micro-batch `i` (0-dim float tensors, in term order).
  using Forward = std::function<std::vector<torch::Tensor>(size_t i)>;

  UpdateStep(optim::Optimizer& optimizer, const optim::LrSchedule& schedule, double clip_norm)
      : optimizer_(optimizer), schedule_(schedule), clip_norm_(clip_norm) {}

  // counts[i][k]: items of term k in micro-batch i of this process (e.g. {masked tokens,
  // examples}). Runs forward(i) and its backward for every micro-batch, then reduces, clips and
  // steps. `updates_done` = updates made so far (the schedule's t).
  UpdateResult operator()(const std::vector<std::vector<double>>& counts, const Forward& forward,
                          int64_t updates_done);

  // [dist] Set for data parallelism: counts are summed over the processes, and the reducer (built
  // with GradientReduction::kSum) sums the gradients, overlapped with the last backward.
  Distributed* dist = nullptr;
  GradientReducer* reducer = nullptr;
  // Debugging / tests: called with each micro-batch's loss before backward; may replace it
  // (e.g. multiply by NaN to exercise the bad-step path).
  std::function<void(int64_t updates_done, torch::Tensor& loss)> loss_hook;

 private:
  optim::Optimizer& optimizer_;
  const optim::LrSchedule& schedule_;
  double clip_norm_;
};

// Items of each term over all micro-batches of this process, summed over the processes.
std::vector<double> global_counts(Distributed* dist, const std::vector<std::vector<double>>& counts);

}  // namespace tisa::train
