// ALiBi with trainable slopes (as x-transformers' learned ALiBi; asked for upstream in
// FlashAttention and x-transformers), the symmetric encoder form:
//   bias[h, i, j] = −exp(s_h) · |j − i|,
// added after 1/√d and before the mask. The parameter `log_slopes` [H] holds s = log m and starts
// at the log of ALiBi's fixed slopes (alibi.h), so that a new model is ALiBi and the slopes stay
// positive under any gradient step. One module per layer by default (position.sharing). The
// [H, L, L] bias is computed once per forward from the 2L−1 offsets.
#pragma once
#include "config/config.h"
#include "model/position/relative_scheme.h"

namespace tisa::model {

struct LearnedAlibiImpl : OffsetBiasScheme {
  explicit LearnedAlibiImpl(int64_t num_heads);
  std::string describe() const override { return "learned slopes"; }
  double flops(int64_t batch, int64_t length) const override;

  // −exp(s_h) |r| for r = −(L−1) … L−1: [H, 2L−1].
  torch::Tensor scores(int64_t length) const override;

  torch::Tensor log_slopes_;  // [H]
};
TORCH_MODULE(LearnedAlibi);

std::shared_ptr<RelativeSchemeImpl> make_learned_alibi_scheme(const config::ModelConfig& c);

}  // namespace tisa::model
