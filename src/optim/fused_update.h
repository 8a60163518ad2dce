// Fused CPU updates for float32 tensors: LAMB and AdamW as one or two passes over each tensor's
// elements instead of a chain of ~12 whole-tensor ops (each a pass over memory and a dispatch).
//
// Same formulas and operation order as the reference paths in lamb.cpp / adamw.cpp (SPEC §7), in
// float32 with float32 constants as ATen uses them. The two agree to a few float ulps, not bitwise:
// ATen may contract a·b + c into one FMA where this file does not, or the other way round, and
// the LAMB norms here accumulate in double. Both are deterministic: a tensor is split into chunks
// of a fixed size, each chunk's partial norms are summed in chunk order, so the result does not
// depend on the number of threads.
#pragma once

#include <cstdint>

namespace tisa::optim::fused {

// The four arrays of one tensor: parameter, gradient, first and second moments (n elements each,
// contiguous, not overlapping).
struct TensorSpan {
  float* w;
  const float* g;
  float* m;
  float* v;
  int64_t n;
};

struct LambStep {
  double beta1, beta2, eps, weight_decay;  // λ applied only when `decay`
  bool bias_correction;
  int64_t step;        // this tensor's update count, 1 at its first (bias correction)
  bool decay;          // u += λ·w
  bool trust_ratio;    // w −= (r·lr)·u with r = ‖w‖/‖u‖; else w −= lr·u
  double lr;
};

// Moments, update direction and (trust-ratio) step for one tensor; returns the ratio r applied
// (1 when trust_ratio is false or either norm is 0).
double lamb_update(const TensorSpan& t, const LambStep& s);

struct AdamWStep {
  double beta1, beta2, eps;
  double decay_factor;  // w ← w·decay_factor first (1 − lr·λ, or 1 for excluded tensors)
  int64_t step;         // 1 at the tensor's first update
  double lr;
};

// torch.optim.AdamW's single-tensor update for one tensor.
void adamw_update(const TensorSpan& t, const AdamWStep& s);

// Elements per chunk: the unit of threading and of the norms' summation order.
inline constexpr int64_t kChunk = 1 << 15;

}  // namespace tisa::optim::fused
