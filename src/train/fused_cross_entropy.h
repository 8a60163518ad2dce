// Cross-entropy summed over rows, with the top-1 hit count, straight from bf16 or float32 logits on
// the CPU (the MLM head). ATen's path casts bf16 [M, V] logits to float32, runs log-softmax and NLL
// forward and backward over the float32 tensor (writing its log-probabilities and a second [M, V]
// gradient pass), casts the gradient back, and counts hits in another pass; this one reads the
// logits once forward and once backward (cross_entropy_kernels.h), with float32 arithmetic inside,
// and counts the arg-max hits in the same pass. Same values as F::cross_entropy on the float32
// logits to float rounding (tests/train/fused_cross_entropy_test.cpp); a bf16 gradient is the same
// bf16 tensor up to a rounding step.
#pragma once
#include <torch/types.h>

namespace tisa::train {

struct CrossEntropySum {
  torch::Tensor loss_sum;  // 0-dim float32: Σ_r (logsumexp(x_r) − x_r,label_r); differentiable
  torch::Tensor hits;      // 0-dim int64: rows whose first arg-max is the label
};

// Whether fused_cross_entropy_sum takes `logits`: 2-D bf16 or float32 on the CPU.
bool fused_cross_entropy_applies(const torch::Tensor& logits);

// logits [M, V] bf16 or float32 on the CPU, labels [M] int64 in [0, V) (checked; a bad label throws).
CrossEntropySum fused_cross_entropy_sum(const torch::Tensor& logits, const torch::Tensor& labels);

}  // namespace tisa::train
