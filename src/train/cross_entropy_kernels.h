// Row-wise softmax cross-entropy over bf16 or float32 logits, read and written as raw arrays: the
// forward (per-row log-sum-exp, loss and arg-max) and the backward (softmax − one-hot, times the
// upstream gradient, written back in the logits' type). One pass over the logits each way, so the
// MLM head needs no float32 copy of bf16 logits nor ATen's log-softmax pair (fused_cross_entropy.h).
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

// A row's log-sum-exp as its maximum and log Σ exp(x − max), kept apart: x − max is exact, so the
// backward's exp(x − max − log_sum) is as precise as a log-softmax, where one float lse of a large
// row would carry its rounding (an ulp of the maximum) into every probability.
struct RowNorm {
  float max;
  float log_sum;
};

// For rows [row_begin, row_end) of logits [rows, cols] (row-major): norm[r] as above, loss[r] =
// (max − x_r,label[r]) + log_sum, argmax[r] = the first column holding the row's maximum.
// A NaN anywhere in a row makes its log_sum and loss NaN. Labels must lie in [0, cols).
// `logits` as bf16 bits or as float32.
void cross_entropy_forward(const uint16_t* logits, const int64_t* labels, int64_t row_begin, int64_t row_end,
                           int64_t cols, RowNorm* norm, float* loss, int64_t* argmax);
void cross_entropy_forward(const float* logits, const int64_t* labels, int64_t row_begin, int64_t row_end,
                           int64_t cols, RowNorm* norm, float* loss, int64_t* argmax);

// grad[r, c] = scale · (exp(x_rc − max_r − log_sum_r) − [c == label[r]]) in the logits' type, rows
// [row_begin, row_end).
void cross_entropy_backward(const uint16_t* logits, const int64_t* labels, const RowNorm* norm, float scale,
                            int64_t row_begin, int64_t row_end, int64_t cols, uint16_t* grad);
void cross_entropy_backward(const float* logits, const int64_t* labels, const RowNorm* norm, float scale,
                            int64_t row_begin, int64_t row_end, int64_t cols, float* grad);

// Whether the AVX-512 kernels run on this CPU; `force_scalar` (tests) makes both functions above
// take the scalar loop.
bool cross_entropy_vectorised();
void cross_entropy_force_scalar(bool force_scalar);

}  // namespace tisa::train::kernels
