// Softmax attention for one (batch, head) over bf16 or float32 rows, forward and backward, with everything
// between the products kept in float32 inside the cache: S = q·kᵀ·scale + bias + mask, P =
// softmax(S), O = P·v; backward dv = Pᵀ·dO, dS = P ∘ (dO·vᵀ − rowsum), dq = dS·k·scale, dk =
// dSᵀ·q·scale. Made for the small heads of the research-scale recipe (d 32–128, L ≤ 1024), where
// ATen's batched products, the [B, H, L, L] softmax and the casts between them cost more than the
// arithmetic (docs/perf/README.md, "A CPU attention kernel for small heads").
//
// bf16 rows: the products run on AVX512_BF16 dot products (float32 accumulation) where the CPU
// has them and as a scalar loop otherwise (same pairing of terms; tests and CPUs without bf16).
// float32 rows (the fp32 models): on AVX-512 FMAs, or a scalar loop. Each head is computed alone
// in a fixed order, so results do not depend on the thread count. No torch header.
#pragma once

#include <cstdint>

namespace tisa::model::kernels {

// A [rows, d] block of rows of T (uint16_t: bf16 bits; float): row r starts at
// data + r·row_stride (elements), d contiguous.
template <typename T>
struct Rows {
  const T* data = nullptr;
  int64_t row_stride = 0;
};
template <typename T>
struct MutableRows {
  T* data = nullptr;
  int64_t row_stride = 0;
};
using Bf16Rows = Rows<uint16_t>;
using MutableBf16Rows = MutableRows<uint16_t>;
using F32Rows = Rows<float>;
using MutableF32Rows = MutableRows<float>;

struct HeadShape {
  int64_t length = 0;     // L: keys (and queries, unless `queries` says otherwise)
  int64_t head_size = 0;  // d, even
  float scale = 1.0f;     // usually 1/√d
  // Only some query rows (a sparse final layer): `queries` rows of q, row i standing at position
  // query_positions[i] ∈ [0, L) among the keys, which picks its bias row and its offsets r(i, j);
  // q, O, dO, dq, P, dS, E and B then have `queries` rows, k, v, dk, dv still L. 0: every position.
  int64_t queries = 0;
  const int64_t* query_positions = nullptr;
  int64_t query_rows() const { return queries > 0 ? queries : length; }
  int64_t position(int64_t i) const { return query_positions ? query_positions[i] : i; }
};

// Row stride of the saved probabilities P [L, probs_stride(L)] (L rounded up to even, zero-padded).
int64_t probs_stride(int64_t length);

// Position terms over clipped offsets, r(i, j) = clip(j − i, −w, w) + w (Shaw's): a logit term
// E [L, 2w+1], E_i,r(i,j) added to row i's logits after the scale, and the probabilities summed
// by offset, B [L, 2w+1] with B_ir = Σ_{j: r(i,j) = r} P_ij, for an output term Σ_r B_ir·aV_r.
// Row stride 2w+1; a null pointer is no such term.
struct OffsetTerms {
  int64_t window = 0;
  const float* logits = nullptr;  // E, read by the forward
  float* buckets = nullptr;       // B, written by the forward
};
struct OffsetTermGrads {
  int64_t window = 0;
  float* logits = nullptr;         // dE_ir = Σ_{j: r(i,j) = r} dS_ij, written by the backward
  const float* buckets = nullptr;  // dB, added to dP_ij at (i, r(i, j)) by the backward
};

// Forward of one head over bf16 rows (d even) or float32 rows. bias: [L, L] float32 (row stride
// bias_stride; null = none); mask: [L] float32 added to every row (null = none). Writes P (in the
// rows' type, [Lq, probs_stride(L)], Lq = shape.query_rows()) for the backward, the output O [Lq, d],
// and B when asked.
void attention_forward(const HeadShape& shape, Bf16Rows q, Bf16Rows k, Bf16Rows v, const float* bias,
                       int64_t bias_stride, const float* mask, uint16_t* probs, MutableBf16Rows out,
                       OffsetTerms offsets = {});
void attention_forward(const HeadShape& shape, F32Rows q, F32Rows k, F32Rows v, const float* bias,
                       int64_t bias_stride, const float* mask, float* probs, MutableF32Rows out,
                       OffsetTerms offsets = {});

// Backward of one head from the saved P and the output gradient dO [Lq, d] (and the offset terms'
// gradients, when the forward had them). Writes dq [Lq, d], dk, dv [L, d] in the rows' type and, when
// dlogits is not null, dS (the gradient of the logits, that is of the bias) as float32 [L, L] (row
// stride L; query row i at row position(i)): written, or added to what is there when
// `accumulate_dlogits` (the heads of a batch summed into one bias gradient, in the caller's order;
// with query positions the caller zeroes dlogits and accumulates, as rows may repeat).
void attention_backward(const HeadShape& shape, Bf16Rows q, Bf16Rows k, Bf16Rows v, const uint16_t* probs,
                        Bf16Rows grad_out, MutableBf16Rows dq, MutableBf16Rows dk, MutableBf16Rows dv,
                        float* dlogits, bool accumulate_dlogits = false, OffsetTermGrads offset_grads = {});
void attention_backward(const HeadShape& shape, F32Rows q, F32Rows k, F32Rows v, const float* probs,
                        F32Rows grad_out, MutableF32Rows dq, MutableF32Rows dk, MutableF32Rows dv, float* dlogits,
                        bool accumulate_dlogits = false, OffsetTermGrads offset_grads = {});

// Whether the vectorised path runs on this CPU for bf16 (AVX512_BF16) or float32 (AVX-512 F/BW/VL);
// `force_scalar` (tests) selects the scalar loops for both.
bool attention_vectorised(bool bf16 = true);
void attention_force_scalar(bool force_scalar);

}  // namespace tisa::model::kernels
