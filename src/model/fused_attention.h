// Fused scaled-dot-product attention (at::scaled_dot_product_attention, LibTorch ≥ 2.1) for the
// attention layers whose position term is an additive logit bias or nothing: the bias (padding
// mask + scheme term) travels as SDPA's float attn_mask, and LibTorch picks its fastest kernel
// (flash / memory-efficient on CUDA, never cuDNN: its masked backward is wrong on sm90 at some
// lengths; flash on CPU when the bias needs no gradient, otherwise its math path). Same result as the eager softmax(q·kᵀ/√d + bias)·v in value and gradients
// (tests/model/fused_attention_test.cpp). On LibTorch 1.13 there is no SDPA: available() is false
// and the attention keeps its eager path.
#pragma once
#include <ATen/core/Tensor.h>

namespace tisa::model {

// Which attention implementation a model's layers use. kAuto: fused where this LibTorch has SDPA
// and the layer allows it (no Shaw value term, probabilities not requested), except for a trainable
// position bias on the CPU while gradients are recorded: LibTorch's CPU flash kernel gives no
// attn_mask gradient, and its math fallback is slower and larger than the eager path
// (docs/perf/README.md, "L = 512: Shaw vs the [L, L, d] variant, TISA vs absolute").
// Before all that, kAuto takes tisa-train's own CPU kernel (model/cpu_attention.h) for bf16 on a
// CPU with AVX512_BF16 and for fp32 on one with AVX-512, where the layer allows it (no dropout on
// the probabilities, probabilities not requested; Shaw's value term through the probabilities the
// kernel sums by offset, RelativeSchemeImpl::output_offset_window).
// kFused: fused wherever the layer allows it (tests of the path CUDA takes); kEager: always the
// explicit softmax (reference, analysis, A/B benchmarks); kCpuKernel: the CPU kernel wherever the
// layer allows it, on its scalar loop where the CPU lacks the instructions (tests).
enum class AttentionBackend { kAuto, kFused, kEager, kCpuKernel };

// Whether this build of tisa-train was compiled against a LibTorch with SDPA.
bool fused_attention_available();

// softmax(q·kᵀ/√d + bias)·v with dropout on the probabilities (p = dropout_p).
// q, k, v [B, H, L, d]; bias broadcastable to [B, H, L, L] (float; large negatives on padding),
// converted to q's dtype with its negatives kept finite. Throws when !fused_attention_available().
at::Tensor fused_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias,
                           double dropout_p);

// The additive padding mask [B, 1, 1, L] clamped so that it stays finite in `dtype` (bf16/fp16
// cannot hold float32's lowest value; a -inf row of padding would turn into NaN inside SDPA).
at::Tensor finite_mask_for(const at::Tensor& additive_mask, c10::ScalarType dtype);

}  // namespace tisa::model
