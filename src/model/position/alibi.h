// ALiBi (Press et al. 2022), the symmetric encoder form: a fixed per-head bias on the logits,
//   bias[h, i, j] = −m_h · |j − i|,
// added after 1/√d and before the mask, with the head slopes m of the authors' get_slopes(H)
// (ofirpress/attention_with_linear_biases): for H a power of two m_h = s^(h+1), s = 2^(−8/H);
// otherwise the slopes of the nearest lower power of two P followed by every other slope of 2P
// (the first H − P of them). Not trainable: no parameters, one module for the model. The [H, L, L]
// bias is cached per (L, dtype, device) and computed in float32 (float64 for float64 logits).
// Golden: ../shared/golden/schemes/alibi_* (tests/model/position/alibi_test.cpp).
#pragma once
#include <vector>

#include "config/config.h"
#include "model/position/relative_scheme.h"

namespace tisa::model {

// get_slopes(heads) of the ALiBi authors, in float64.
std::vector<double> alibi_slopes(int64_t heads);

struct AlibiImpl : RelativeSchemeImpl {
  explicit AlibiImpl(int64_t num_heads);
  torch::Tensor add_to_logits(torch::Tensor logits, const torch::Tensor& q) override;
  std::string describe() const override { return "fixed slopes"; }
  double flops(int64_t batch, int64_t length) const override;
  torch::Tensor offset_profile(int64_t n) const override;

  // bias[h, i, j] = −m_h |j − i|: [H, L, L].
  torch::Tensor bias(int64_t length, const torch::TensorOptions& options) const;

 private:
  std::vector<double> slopes_;
  torch::Tensor cached_bias_;
};
TORCH_MODULE(Alibi);

std::shared_ptr<RelativeSchemeImpl> make_alibi_scheme(const config::ModelConfig& c);

}  // namespace tisa::model
