// KERPLE-log; see kerple_log.h.
#include "model/position/kerple_log.h"

#include <torch/torch.h>

namespace tisa::model {
namespace {
constexpr double kMinParameter = 1e-2;  // the official code's eps
}  // namespace

void KerpleLogSettings::validate(const config::ModelConfig&, bool, config::SettingsProblems& p) const {
  p.positive("init_r1_max", init_r1_max);
  p.positive("init_r2_max", init_r2_max);
}

std::unique_ptr<config::SchemeSettings> make_kerple_log_settings() { return config::make_settings<KerpleLogSettings>(); }

std::shared_ptr<RelativeSchemeImpl> make_kerple_log_scheme(const config::ModelConfig& c) {
  return std::make_shared<KerpleLogImpl>(c.num_attention_heads, c.position.settings<KerpleLogSettings>());
}

KerpleLogImpl::KerpleLogImpl(int64_t num_heads, const KerpleLogSettings& settings) {
  r1_ = register_parameter("r1", torch::rand({num_heads}) * settings.init_r1_max);
  r2_ = register_parameter("r2", torch::rand({num_heads}) * settings.init_r2_max);
}

torch::Tensor KerpleLogImpl::scores(int64_t length) const {
  auto r = torch::arange(-(length - 1), length, r1_.options()).abs();             // [2L−1]: |j − i|
  auto r1 = r1_.clamp_min(kMinParameter).unsqueeze(1), r2 = r2_.clamp_min(kMinParameter).unsqueeze(1);
  return -r1 * torch::log1p(r2 * r.unsqueeze(0));                                  // [H, 2L−1]
}

double KerpleLogImpl::flops(int64_t batch, int64_t length) const {
  return static_cast<double>(batch) * r1_.size(0) * length * length + 4.0 * r1_.size(0) * (2 * length - 1);
}

}  // namespace tisa::model
