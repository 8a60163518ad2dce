// Fused attention through SDPA; see fused_attention.h.
#include "model/fused_attention.h"

#include <torch/torch.h>
#include <torch/version.h>

#include <limits>

#include "common/error.h"

// at::scaled_dot_product_attention appeared in 2.0; its `scale` argument (used below so that the
// 1/√d of SPEC §2 is stated, not implied) in 2.1.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
#define TISA_HAS_SDPA 1
#else
#define TISA_HAS_SDPA 0
#endif

namespace tisa::model {

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
  return at::scaled_dot_product_attention(q, k.to(q.scalar_type()), v.to(q.scalar_type()), mask, dropout_p,
                                          /*is_causal=*/false, scale);
#else
  (void)q, (void)k, (void)v, (void)bias, (void)dropout_p;
  throw Error("fused attention needs LibTorch >= 2.1 (this build uses " TORCH_VERSION ")");
#endif
}

}  // namespace tisa::model
