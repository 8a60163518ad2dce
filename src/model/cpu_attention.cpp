// The CPU attention kernels as an autograd function; see cpu_attention.h.
#include "model/cpu_attention.h"

#include <ATen/ExpandUtils.h>
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cmath>
#include <type_traits>
#include <vector>

#include "model/attention_kernels.h"

namespace tisa::model {
namespace {

namespace k = kernels;

// A tensor's elements as the kernels store them: bf16 as its bits, float32 as float.
template <typename T>
const T* elements(const at::Tensor& t) {
  if constexpr (std::is_same_v<T, float>) return t.data_ptr<float>();
  else return reinterpret_cast<const uint16_t*>(t.data_ptr<at::BFloat16>());
}
template <typename T>
T* elements_mut(at::Tensor& t) {
  if constexpr (std::is_same_v<T, float>) return t.data_ptr<float>();
  else return reinterpret_cast<uint16_t*>(t.data_ptr<at::BFloat16>());
}

// Rows of head (b, h) of a [B, H, L, d] tensor whose last dimension is contiguous.
template <typename T>
k::Rows<T> head_rows(const at::Tensor& t, int64_t b, int64_t h) {
  return {elements<T>(t) + b * t.stride(0) + h * t.stride(1), t.stride(2)};
}
template <typename T>
k::MutableRows<T> head_rows_mut(at::Tensor& t, int64_t b, int64_t h) {
  return {elements_mut<T>(t) + b * t.stride(0) + h * t.stride(1), t.stride(2)};
}

at::Tensor with_contiguous_rows(const at::Tensor& t) { return t.stride(-1) == 1 ? t : t.contiguous(); }

// A [B, H, L, d] tensor of `options`' dtype laid out as [B, L, H, d] (what the output projection reads).
at::Tensor heads_last_layout(int64_t B, int64_t H, int64_t L, int64_t d, const at::TensorOptions& options) {
  return at::empty({B, L, H, d}, options).permute({0, 2, 1, 3});
}

// bias as contiguous float32 [Bb, Hb, L, L] with Bb ∈ {1, B}, Hb ∈ {1, H}; row (b, h) at offset().
struct ExpandedBias {
  at::Tensor values;
  int64_t batches = 1, heads = 1, L = 0;
  ExpandedBias(const at::Tensor& bias, int64_t B, int64_t H, int64_t length) : L(length) {
    if (bias.numel() == 0) return;
    auto b = bias.to(at::kFloat);
    while (b.dim() < 4) b = b.unsqueeze(0);
    TORCH_CHECK(b.dim() == 4 && (b.size(0) == 1 || b.size(0) == B) && (b.size(1) == 1 || b.size(1) == H) &&
                    (b.size(2) == 1 || b.size(2) == L) && (b.size(3) == 1 || b.size(3) == L),
                "cpu_attention: bias of shape ", bias.sizes(), " does not broadcast to [", B, ", ", H, ", ", L, ", ",
                L, "]");
    batches = b.size(0);
    heads = b.size(1);
    values = b.expand({batches, heads, L, L}).contiguous();
  }
  const float* at(int64_t b, int64_t h) const {
    if (!values.defined()) return nullptr;
    return values.data_ptr<float>() + ((batches > 1 ? b : 0) * heads + (heads > 1 ? h : 0)) * L * L;
  }
};

// The shape of sequence b's heads: every query position, or the Lq rows of query_positions [B, Lq].
k::HeadShape sequence_shape(const k::HeadShape& shape, const at::Tensor& query_positions, int64_t b) {
  k::HeadShape s = shape;
  if (query_positions.defined()) {
    s.queries = query_positions.size(1);
    s.query_positions = query_positions.data_ptr<int64_t>() + b * s.queries;
  }
  return s;
}

// The heads of a batch through the kernels for element type T (uint16_t: bf16; float): q [B, H, Lq,
// d], k, v [B, H, L, d] (Lq = L unless query_positions is defined). Offset terms of window w
// (model/attention_kernels.h), each undefined or float32 [B, H, Lq, 2w+1]: offset_logits read,
// buckets written.
template <typename T>
void forward_heads(const k::HeadShape& shape, const at::Tensor& query_positions, const at::Tensor& q,
                   const at::Tensor& kt, const at::Tensor& v, const ExpandedBias& bias, const at::Tensor& mask,
                   at::Tensor& probs, at::Tensor& out, int64_t window, const at::Tensor& offset_logits,
                   at::Tensor& buckets) {
  const int64_t B = q.size(0), H = q.size(1), Lq = q.size(2), L = kt.size(2);
  at::parallel_for(0, B * H, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t b = i / H, h = i % H;
      const int64_t head_offsets = i * Lq * (2 * window + 1);
      k::OffsetTerms offsets{window, nullptr, nullptr};
      if (offset_logits.defined()) offsets.logits = offset_logits.data_ptr<float>() + head_offsets;
      if (buckets.defined()) offsets.buckets = buckets.data_ptr<float>() + head_offsets;
      k::attention_forward(sequence_shape(shape, query_positions, b), head_rows<T>(q, b, h), head_rows<T>(kt, b, h),
                           head_rows<T>(v, b, h), bias.at(b, h), L,
                           mask.defined() ? mask.data_ptr<float>() + b * L : nullptr,
                           elements_mut<T>(probs) + i * Lq * k::probs_stride(L), head_rows_mut<T>(out, b, h),
                           offsets);
    }
  });
}

// dq, dk, dv and, where dlogits is defined, the bias gradient: summed over the batch into
// [1, H, L, L] when `per_head_sum` (each head by one thread, in batch order), else per head. With
// query positions, dlogits comes zeroed and every head adds its rows (a position may repeat).
// Offset terms of window w, each undefined or float32 [B, H, Lq, 2w+1]: grad_buckets read,
// d_offset_logits written.
template <typename T>
void backward_heads(const k::HeadShape& shape, const at::Tensor& query_positions, const at::Tensor& q,
                    const at::Tensor& kt, const at::Tensor& v, const at::Tensor& probs, const at::Tensor& grad_out,
                    int64_t window, const at::Tensor& grad_buckets, at::Tensor& d_offset_logits, at::Tensor& dq,
                    at::Tensor& dk, at::Tensor& dv, at::Tensor& dlogits, bool per_head_sum) {
  const int64_t B = q.size(0), H = q.size(1), Lq = q.size(2), L = kt.size(2);
  const bool accumulate = per_head_sum || query_positions.defined();
  auto backward_head = [&](int64_t b, int64_t h) {
    float* ds = nullptr;
    if (dlogits.defined()) ds = dlogits.data_ptr<float>() + (per_head_sum ? h : b * H + h) * L * L;
    const int64_t head_offsets = (b * H + h) * Lq * (2 * window + 1);
    k::OffsetTermGrads offset_grads{window, nullptr, nullptr};
    if (d_offset_logits.defined()) offset_grads.logits = d_offset_logits.data_ptr<float>() + head_offsets;
    if (grad_buckets.defined()) offset_grads.buckets = grad_buckets.data_ptr<float>() + head_offsets;
    k::attention_backward(sequence_shape(shape, query_positions, b), head_rows<T>(q, b, h), head_rows<T>(kt, b, h),
                          head_rows<T>(v, b, h), elements<T>(probs) + (b * H + h) * Lq * k::probs_stride(L),
                          head_rows<T>(grad_out, b, h), head_rows_mut<T>(dq, b, h), head_rows_mut<T>(dk, b, h),
                          head_rows_mut<T>(dv, b, h), ds, accumulate, offset_grads);
  };
  if (per_head_sum) {
    at::parallel_for(0, H, 1, [&](int64_t begin, int64_t end) {
      for (int64_t h = begin; h < end; ++h)
        for (int64_t b = 0; b < B; ++b) backward_head(b, h);
    });
  } else {
    at::parallel_for(0, B * H, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) backward_head(i / H, i % H);
    });
  }
}

// Inputs q, k, v, bias, key_mask, offset_logits (empty: none), window (< 0: no offset terms),
// buckets (whether to return them), query_positions (empty: every position). Outputs: the context
// and the offset buckets (else empty).
struct CpuAttentionFunction : torch::autograd::Function<CpuAttentionFunction> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, at::Tensor q, at::Tensor kt,
                                                at::Tensor v, at::Tensor bias, at::Tensor key_mask,
                                                at::Tensor offset_logits, int64_t window, bool want_buckets,
                                                at::Tensor query_positions) {
    q = with_contiguous_rows(q);
    kt = with_contiguous_rows(kt);
    v = with_contiguous_rows(v);
    const at::Tensor positions = query_positions.numel() > 0 ? query_positions.contiguous() : at::Tensor();
    const int64_t B = q.size(0), H = q.size(1), Lq = q.size(2), L = kt.size(2), d = q.size(3);
    const k::HeadShape shape{L, d, static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)))};
    const ExpandedBias expanded(bias, B, H, L);
    at::Tensor mask;
    if (key_mask.numel() > 0) {
      TORCH_CHECK(key_mask.numel() == B * L, "cpu_attention: key_mask of shape ", key_mask.sizes(),
                  " is not one additive row of ", L, " per sequence of ", B);
      mask = key_mask.to(at::kFloat).reshape({B, L}).contiguous();
    }
    auto probs = at::empty({B, H, Lq, k::probs_stride(L)}, q.options());
    auto out = heads_last_layout(B, H, Lq, d, q.options());
    at::Tensor buckets, offsets;
    if (window >= 0 && want_buckets) buckets = at::empty({B, H, Lq, 2 * window + 1}, q.options().dtype(at::kFloat));
    if (window >= 0 && offset_logits.numel() > 0) {
      TORCH_CHECK(offset_logits.sizes() == at::IntArrayRef({B, H, Lq, 2 * window + 1}), "cpu_attention: offset logits ",
                  offset_logits.sizes(), ", expected [", B, ", ", H, ", ", Lq, ", ", 2 * window + 1, "]");
      offsets = offset_logits.to(at::kFloat).contiguous();
    }
    if (q.scalar_type() == at::kFloat)
      forward_heads<float>(shape, positions, q, kt, v, expanded, mask, probs, out, window, offsets, buckets);
    else
      forward_heads<uint16_t>(shape, positions, q, kt, v, expanded, mask, probs, out, window, offsets, buckets);
    ctx->save_for_backward({q, kt, v, probs});
    ctx->saved_data["query_positions"] = positions.defined() ? positions : at::empty({0}, at::kLong);
    ctx->saved_data["bias_sizes"] = bias.numel() > 0 ? bias.sizes().vec() : std::vector<int64_t>{};
    ctx->saved_data["bias_dtype"] = static_cast<int64_t>(bias.scalar_type());
    ctx->saved_data["window"] = window;
    ctx->saved_data["offset_logits"] = offsets.defined();
    ctx->saved_data["offset_logits_dtype"] = static_cast<int64_t>(offset_logits.scalar_type());
    if (!buckets.defined()) {
      buckets = at::empty({0}, q.options().dtype(at::kFloat));
      ctx->mark_non_differentiable({buckets});
    }
    return {out, buckets};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &q = saved[0], &kt = saved[1], &v = saved[2], &probs = saved[3];
    const int64_t B = q.size(0), H = q.size(1), Lq = q.size(2), L = kt.size(2), d = q.size(3);
    at::Tensor positions = ctx->saved_data["query_positions"].toTensor();
    if (positions.numel() == 0) positions = at::Tensor();
    const k::HeadShape shape{L, d, static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)))};
    const auto grad_out = with_contiguous_rows(grads[0].to(q.scalar_type()));
    const int64_t window = ctx->saved_data["window"].toInt();
    at::Tensor grad_buckets;
    if (window >= 0 && grads.size() > 1 && grads[1].defined() && grads[1].numel() > 0)
      grad_buckets = grads[1].to(at::kFloat).contiguous();
    at::Tensor d_offset_logits;
    if (ctx->saved_data["offset_logits"].toBool() && ctx->needs_input_grad(5))
      d_offset_logits = at::empty({B, H, Lq, 2 * window + 1}, q.options().dtype(at::kFloat));
    auto dq = heads_last_layout(B, H, Lq, d, q.options());
    auto dk = heads_last_layout(B, H, L, d, q.options());
    auto dv = heads_last_layout(B, H, L, d, q.options());
    const auto bias_sizes = ctx->saved_data["bias_sizes"].toIntVector();
    const bool bias_grad = !bias_sizes.empty() && ctx->needs_input_grad(3);
    // A bias shared by the batch ([1, H, L, L], TISA and every offset scheme) gets its gradient
    // summed over the batch in place, each head by one thread in batch order (so the same bits at
    // any thread count); another shape gets dS in full, summed by ATen.
    std::vector<int64_t> bias4(bias_sizes);
    while (bias_grad && bias4.size() < 4) bias4.insert(bias4.begin(), 1);
    const bool per_head_sum = bias_grad && bias4[0] == 1 && bias4[1] == H;
    at::Tensor dlogits;
    const auto f32 = q.options().dtype(at::kFloat);
    if (per_head_sum) dlogits = at::zeros({1, H, L, L}, f32);
    else if (bias_grad) dlogits = positions.defined() ? at::zeros({B, H, L, L}, f32) : at::empty({B, H, L, L}, f32);
    if (q.scalar_type() == at::kFloat)
      backward_heads<float>(shape, positions, q, kt, v, probs, grad_out, window, grad_buckets, d_offset_logits, dq,
                            dk, dv, dlogits, per_head_sum);
    else
      backward_heads<uint16_t>(shape, positions, q, kt, v, probs, grad_out, window, grad_buckets, d_offset_logits,
                               dq, dk, dv, dlogits, per_head_sum);
    if (d_offset_logits.defined())
      d_offset_logits = d_offset_logits.to(static_cast<at::ScalarType>(ctx->saved_data["offset_logits_dtype"].toInt()));
    at::Tensor dbias;
    if (bias_grad) {
      const auto dtype = static_cast<at::ScalarType>(ctx->saved_data["bias_dtype"].toInt());
      dbias = at::sum_to(dlogits, bias_sizes).to(dtype);
    }
    return {dq, dk, dv, dbias, at::Tensor(), d_offset_logits, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

bool cpu_attention_supports(const at::Tensor& q) {
  if (!q.defined() || !q.device().is_cpu() || q.dim() != 4 || q.size(3) > 256 || q.size(2) > 1024 || q.size(2) == 0)
    return false;
  if (q.scalar_type() == at::kFloat) return q.size(3) > 0;
  return q.scalar_type() == at::kBFloat16 && q.size(3) % 2 == 0;
}

bool cpu_attention_native(c10::ScalarType dtype) {
  return kernels::attention_vectorised(/*bf16=*/dtype == at::kBFloat16);
}

namespace {

torch::autograd::variable_list apply_cpu_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                   const at::Tensor& bias, const at::Tensor& key_mask,
                                                   const at::Tensor& offset_logits, int64_t window, bool buckets,
                                                   const at::Tensor& query_positions) {
  TORCH_CHECK(cpu_attention_supports(k), "cpu_attention: k must be a CPU bf16 or float32 [B, H, L, d] tensor with "
              "d <= 256 (even for bf16) and L <= 1024, got ", k.scalar_type(), " ", k.sizes(), " on ", k.device());
  TORCH_CHECK(v.sizes() == k.sizes() && k.scalar_type() == q.scalar_type() && v.scalar_type() == q.scalar_type(),
              "cpu_attention: k and v must have q's dtype and one shape, got ", k.sizes(), " and ", v.sizes());
  if (query_positions.defined()) {
    const int64_t B = k.size(0), L = k.size(2);
    TORCH_CHECK(query_positions.scalar_type() == at::kLong && query_positions.device().is_cpu() &&
                    query_positions.dim() == 2 && query_positions.size(0) == B && query_positions.size(1) > 0,
                "cpu_attention: query_positions must be a CPU int64 [B, Lq] tensor with B = ", B, " and Lq > 0, got ",
                query_positions.scalar_type(), " ", query_positions.sizes());
    TORCH_CHECK(q.dim() == 4 && q.size(0) == B && q.size(1) == k.size(1) && q.size(2) == query_positions.size(1) &&
                    q.size(3) == k.size(3),
                "cpu_attention: q of shape ", q.sizes(), " is not [B, H, Lq, d] for k ", k.sizes(),
                " and query_positions ", query_positions.sizes());
    TORCH_CHECK(q.size(2) <= L, "cpu_attention: ", q.size(2), " query rows per sequence, more than its ", L,
                " positions (the kernels' buffers hold L rows): ask for each position once");
    TORCH_CHECK(query_positions.min().item<int64_t>() >= 0 && query_positions.max().item<int64_t>() < L,
                "cpu_attention: query_positions outside [0, ", L, ")");
  } else {
    TORCH_CHECK(q.sizes() == k.sizes(), "cpu_attention: q of shape ", q.sizes(), " is not k's ", k.sizes());
  }
  // LibTorch 1.13's autograd functions take no undefined tensor: an empty one stands for "none".
  auto or_empty = [&](const at::Tensor& t) { return t.defined() ? t : at::empty({0}, q.options().dtype(at::kFloat)); };
  const auto positions = query_positions.defined() ? query_positions : at::empty({0}, at::kLong);
  return CpuAttentionFunction::apply(q, k, v, or_empty(bias), or_empty(key_mask), or_empty(offset_logits), window,
                                     buckets, positions);
}

}  // namespace

at::Tensor cpu_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias,
                         const at::Tensor& key_mask, const at::Tensor& query_positions) {
  return apply_cpu_attention(q, k, v, bias, key_mask, at::Tensor(), -1, false, query_positions)[0];
}

CpuAttentionWithOffsets cpu_attention_with_offsets(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                   const at::Tensor& bias, const at::Tensor& key_mask,
                                                   const OffsetTermsRequest& offsets,
                                                   const at::Tensor& query_positions) {
  TORCH_CHECK(k.dim() == 4 && offsets.window >= 0 && offsets.window < k.size(2), "cpu_attention: offset window ",
              offsets.window, " outside [0, L) for k of shape ", k.sizes());
  auto out =
      apply_cpu_attention(q, k, v, bias, key_mask, offsets.logits, offsets.window, offsets.buckets, query_positions);
  return {out[0], offsets.buckets ? out[1] : at::Tensor()};
}

}  // namespace tisa::model
