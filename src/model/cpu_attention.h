// softmax(q·kᵀ/√d + bias + mask)·v on the CPU in bf16 or float32 through tisa-train's own kernels
// (model/attention_kernels.h), with its backward: one pass per (batch, head) that keeps the
// [L, L] logits in float32 inside the cache, instead of ATen's batched products, a [B, H, L, L]
// softmax and the casts and adds between them. Checked against the eager attention in values
// and gradients (tests/model/cpu_attention_test.cpp).
#pragma once
#include <ATen/core/Tensor.h>

namespace tisa::model {

// Whether cpu_attention() takes these q (and k, v of the same shape and dtype): a CPU bf16 or
// float32 tensor [B, H, L, d] with d ≤ 256 (even for bf16), L ≤ 1024.
bool cpu_attention_supports(const at::Tensor& q);

// Whether the kernels for `dtype` run vectorised on this CPU (bf16: AVX512_BF16's dot products;
// float32: AVX-512 FMAs); otherwise a slow scalar loop, which the automatic backend does not choose.
bool cpu_attention_native(c10::ScalarType dtype);

// q, k, v [B, H, L, d] of one dtype, bf16 or float32, each with d contiguous. bias: undefined, or a
// float tensor broadcastable to [B, H, L, L] (its gradient is returned summed to its own shape);
// key_mask: undefined, or an additive float [B, 1, 1, L] without gradient (finite: finite_mask_for).
// Returns the context [B, H, L, d] (a view of a [B, L, H, d] tensor, so that merging the heads
// after it is free).
// query_positions: undefined (every position a query), or int64 [B, Lq] on the CPU: then q is
// [B, H, Lq, d], its row i of sequence b standing at position query_positions[b, i] ∈ [0, L) (its
// bias row and offsets), and the context is [B, H, Lq, d], Lq ≤ L. Positions may repeat. The sparse
// final layer's queries: the rows its heads read, not all L (AlbertAttention).
at::Tensor cpu_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias,
                         const at::Tensor& key_mask, const at::Tensor& query_positions = {});

// The same with position terms over clipped offsets r(i, j) = clip(j − i, −w, w) + w (Shaw's;
// model/attention_kernels.h), both differentiable: `logits` E [B, H, L, 2w+1] (float, or undefined)
// adds E_i,r(i,j) to the logits after the scale; with `buckets` the result also holds the
// probabilities summed by offset, B [B, H, L, 2w+1] float32, B_ir = Σ_{j: r(i,j) = r} P_ij, for an
// output term B·aV. 0 ≤ window < L. With query_positions (as cpu_attention), E and B have Lq rows.
struct OffsetTermsRequest {
  int64_t window = 0;
  at::Tensor logits;
  bool buckets = false;
};
struct CpuAttentionWithOffsets {
  at::Tensor context;
  at::Tensor buckets;  // undefined unless requested
};
CpuAttentionWithOffsets cpu_attention_with_offsets(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                   const at::Tensor& bias, const at::Tensor& key_mask,
                                                   const OffsetTermsRequest& offsets,
                                                   const at::Tensor& query_positions = {});

}  // namespace tisa::model
