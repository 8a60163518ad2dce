// Helpers shared by the attention and the schemes; see relative_scheme.h.
#include "model/position/relative_scheme.h"

#include <torch/torch.h>

#include <cmath>

namespace tisa::model {

torch::Tensor scheme_logits(torch::Tensor& q, torch::Tensor& k, RelativeSchemeImpl* scheme) {
  if (scheme) scheme->transform_qk(q, k);                                         // RoPE: [B, H, L, d]
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  auto logits = torch::matmul(q, k.transpose(-1, -2)) * scale;                    // [B, H, L, L]
  if (scheme) logits = scheme->add_to_logits(logits, q);                          // SPEC §2: after scaling
  return logits;
}

torch::Tensor add_logit_bias(const torch::Tensor& logits, const torch::Tensor& bias) {
  return logits + (bias.scalar_type() == logits.scalar_type() ? bias : bias.to(logits.scalar_type()));
}

torch::Tensor toeplitz_from_offsets(const torch::Tensor& f, int64_t length) {
  return f.unfold(1, length, 1).flip({1});  // [H, L, L]
}

void LogitBiasScheme::begin_forward(int64_t length) { cached_bias_ = bias(length); }

torch::Tensor LogitBiasScheme::add_to_logits(torch::Tensor logits, const torch::Tensor& q) {
  const int64_t L = q.size(2);
  if (!cached_bias_.defined() || cached_bias_.size(-1) != L) cached_bias_ = bias(L);  // called without begin_forward
  return add_logit_bias(logits, cached_bias_.unsqueeze(0));                          // [B, H, L, L]
}

torch::Tensor OffsetBiasScheme::offset_profile(int64_t n) const {
  torch::NoGradGuard no_grad;
  return scores(n).to(torch::kCPU, torch::kDouble);  // [H, 2n−1]
}

}  // namespace tisa::model
