// ALiBi; see alibi.h.
#include "model/position/alibi.h"

#include <torch/torch.h>

#include <cmath>

namespace tisa::model {
namespace {

std::vector<double> slopes_power_of_2(int64_t n) {
  const double start = std::pow(2.0, -std::pow(2.0, -(std::log2(static_cast<double>(n)) - 3)));
  std::vector<double> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(start * std::pow(start, static_cast<double>(i)));
  return out;
}

}  // namespace

std::vector<double> alibi_slopes(int64_t heads) {
  TORCH_CHECK(heads >= 1, "alibi: heads must be >= 1, got ", heads);
  const double l = std::log2(static_cast<double>(heads));
  if (l == std::floor(l)) return slopes_power_of_2(heads);
  const int64_t closest = int64_t{1} << static_cast<int64_t>(std::floor(l));
  auto out = slopes_power_of_2(closest);
  const auto twice = alibi_slopes(2 * closest);
  for (int64_t i = 0; i < heads - closest; ++i) out.push_back(twice[static_cast<size_t>(2 * i)]);
  return out;
}

std::unique_ptr<config::SchemeSettings> make_alibi_settings() { return nullptr; }  // no settings

std::shared_ptr<RelativeSchemeImpl> make_alibi_scheme(const config::ModelConfig& c) {
  return std::make_shared<AlibiImpl>(c.num_attention_heads);
}

AlibiImpl::AlibiImpl(int64_t num_heads) : slopes_(alibi_slopes(num_heads)) {}

torch::Tensor AlibiImpl::bias(int64_t length, const torch::TensorOptions& options) const {
  auto m = torch::tensor(slopes_, torch::kDouble).to(options);                        // [H]
  auto pos = torch::arange(length, options);
  auto distance = (pos.unsqueeze(0) - pos.unsqueeze(1)).abs();                        // [L, L]: |j − i|
  return -m.view({-1, 1, 1}) * distance.unsqueeze(0);                                 // [H, L, L]
}

torch::Tensor AlibiImpl::add_to_logits(torch::Tensor logits, const torch::Tensor& q) {
  const int64_t L = q.size(2);
  const auto dtype = logits.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
  if (!cached_bias_.defined() || cached_bias_.size(-1) != L || cached_bias_.scalar_type() != dtype ||
      cached_bias_.device() != logits.device())
    cached_bias_ = bias(L, torch::TensorOptions().dtype(dtype).device(logits.device()));
  return add_logit_bias(logits, cached_bias_.unsqueeze(0));                        // [B, H, L, L]
}

double AlibiImpl::flops(int64_t batch, int64_t length) const {
  return static_cast<double>(batch) * static_cast<double>(slopes_.size()) * length * length;  // the add
}

torch::Tensor AlibiImpl::offset_profile(int64_t n) const {
  auto m = torch::tensor(slopes_, torch::kDouble);
  auto r = torch::arange(-(n - 1), n, torch::kDouble).abs();
  return -m.unsqueeze(1) * r.unsqueeze(0);                                            // [H, 2n−1]
}

}  // namespace tisa::model
