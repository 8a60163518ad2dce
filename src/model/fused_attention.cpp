// Fused attention through SDPA; see fused_attention.h.
#include "model/fused_attention.h"

#include <torch/torch.h>
#include <torch/version.h>

#include <limits>
#include <optional>

#include "common/error.h"

// at::scaled_dot_product_attention appeared in 2.0; its `scale` argument (used below so that the
// 1/√d of SPEC §2 is stated, not implied) in 2.1.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
#define TISA_HAS_SDPA 1
#include <ATen/Context.h>
#else
#define TISA_HAS_SDPA 0
#endif
// The cuDNN SDPA backend (LibTorch >= 2.3) can be switched off through the global context.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define TISA_HAS_CUDNN_SDPA 1
#else
#define TISA_HAS_CUDNN_SDPA 0
#endif

namespace tisa::model {

namespace {
#if TISA_HAS_CUDNN_SDPA
// Keeps SDPA off its cuDNN backend for one call, restoring the user's setting after. With an
// attn_mask, cuDNN's backward gives NaN dq on sm90 at L % 128 == 64 (pytorch#196678, torch 2.11);
// the memory-efficient kernel then serves the call and also returns the bias gradient.
class NoCudnnAttention {
 public:
  NoCudnnAttention() : previous_(at::globalContext().userEnabledCuDNNSDP()) {
    at::globalContext().setSDPUseCuDNN(false);
  }
  ~NoCudnnAttention() { at::globalContext().setSDPUseCuDNN(previous_); }
  NoCudnnAttention(const NoCudnnAttention&) = delete;
  NoCudnnAttention& operator=(const NoCudnnAttention&) = delete;

 private:
  bool previous_;
};
#else
struct NoCudnnAttention {};  // no cuDNN backend in this LibTorch
#endif
}  // namespace

bool fused_attention_available() { return TISA_HAS_SDPA != 0; }

at::Tensor finite_mask_for(const at::Tensor& additive_mask, c10::ScalarType dtype) {
  switch (dtype) {
    case c10::ScalarType::BFloat16:
      return additive_mask.clamp_min(static_cast<double>(std::numeric_limits<c10::BFloat16>::lowest()));
    case c10::ScalarType::Half:
      return additive_mask.clamp_min(static_cast<double>(std::numeric_limits<c10::Half>::lowest()));
    default:
      return additive_mask;
  }
}

at::Tensor fused_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias,
                           double dropout_p) {
#if TISA_HAS_SDPA
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  // SDPA wants a float mask in the query's dtype (bf16 under autocast).
  const auto mask = bias.scalar_type() == q.scalar_type() ? bias : bias.to(q.scalar_type());
  // The backend is chosen here, in the forward: autograd records that backend's own backward.
  std::optional<NoCudnnAttention> no_cudnn;
  if (q.is_cuda()) no_cudnn.emplace();
  return at::scaled_dot_product_attention(q, k.to(q.scalar_type()), v.to(q.scalar_type()), mask, dropout_p,
                                          /*is_causal=*/false, scale);
#else
  (void)q, (void)k, (void)v, (void)bias, (void)dropout_p;
  throw Error("fused attention needs LibTorch >= 2.1 (this build uses " TORCH_VERSION ")");
#endif
}

}  // namespace tisa::model
