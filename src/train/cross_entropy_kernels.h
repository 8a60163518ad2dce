// Row-wise softmax cross-entropy over bf16 logits, read and written as raw arrays: the forward
// (per-row log-sum-exp, loss and arg-max) and the backward (softmax − one-hot, times the upstream
// gradient, written back in bf16). One pass over the logits each way, so the MLM head needs no
// float32 copy of its [M, V] logits nor ATen's log-softmax pair (fused_cross_entropy.h).
//
// On a CPU with AVX-512 (F, BW, VL) 16 lanes at a time with an exp of ~2 float ulps; elsewhere a
// scalar loop over std::exp. Each row is independent and its sums run in a fixed order, so results
// do not depend on the thread count.
#pragma once

#include <cstdint>

#include "common/bf16.h"

namespace tisa::train::kernels {

// bf16 <-> float32 as stored (common/bf16.h).
using ::tisa::bf16_to_float;
using ::tisa::float_to_bf16;

// For rows [row_begin, row_end) of logits [rows, cols] (row-major): lse[r] = log Σ_c exp(x_rc),
// loss[r] = lse[r] − x_r,label[r], argmax[r] = the first column holding the row's maximum.
// A NaN anywhere in a row makes its lse and loss NaN. Labels must lie in [0, cols).
void cross_entropy_forward(const uint16_t* logits, const int64_t* labels, int64_t row_begin, int64_t row_end,
                           int64_t cols, float* lse, float* loss, int64_t* argmax);

// grad[r, c] = scale · (exp(x_rc − lse[r]) − [c == label[r]]) in bf16, rows [row_begin, row_end).
void cross_entropy_backward(const uint16_t* logits, const int64_t* labels, const float* lse, float scale,
                            int64_t row_begin, int64_t row_end, int64_t cols, uint16_t* grad);

// Whether the AVX-512 kernels run on this CPU; `force_scalar` (tests) makes both functions above
// take the scalar loop.
bool cross_entropy_vectorised();
void cross_entropy_force_scalar(bool force_scalar);

}  // namespace tisa::train::kernels
