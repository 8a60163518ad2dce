// ALiBi with trainable slopes; see learned_alibi.h.
#include "model/position/learned_alibi.h"

#include <torch/torch.h>

#include <cmath>

#include "model/position/alibi.h"

namespace tisa::model {

std::unique_ptr<config::SchemeSettings> make_learned_alibi_settings() { return nullptr; }  // no settings

std::shared_ptr<RelativeSchemeImpl> make_learned_alibi_scheme(const config::ModelConfig& c) {
  return std::make_shared<LearnedAlibiImpl>(c.num_attention_heads);
}

LearnedAlibiImpl::LearnedAlibiImpl(int64_t num_heads) {
  std::vector<double> log_slopes;
  for (double m : alibi_slopes(num_heads)) log_slopes.push_back(std::log(m));
  log_slopes_ = register_parameter("log_slopes", torch::tensor(log_slopes, torch::kDouble).to(torch::kFloat));
}

torch::Tensor LearnedAlibiImpl::scores(int64_t length) const {
  auto r = torch::arange(-(length - 1), length, log_slopes_.options()).abs();  // [2L−1]: |j − i|
  return -log_slopes_.exp().unsqueeze(1) * r.unsqueeze(0);                      // [H, 2L−1]
}

double LearnedAlibiImpl::flops(int64_t batch, int64_t length) const {
  return static_cast<double>(batch) * log_slopes_.size(0) * length * length + 2.0 * log_slopes_.size(0) * (2 * length - 1);
}

}  // namespace tisa::model
