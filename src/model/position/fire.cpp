// FIRE; see fire.h.
#include "model/position/fire.h"

#include <torch/torch.h>

#include <cmath>

namespace tisa::model {

void FireSettings::validate(const config::ModelConfig&, bool, config::SettingsProblems& p) const {
  p.at_least("hidden_size", hidden_size, 1);
  p.positive("init_c", init_c);
  if (!(init_threshold >= 1) || std::isinf(init_threshold))
    p.add("init_threshold", "must be a finite number >= 1, got " + config::SettingsProblems::number(init_threshold));
}

bool FireSettings::apply_preset(const std::string& preset, const config::ModelConfig&) {
  if (preset != "tiny") return false;
    hidden_size = 8;
    init_threshold = 6;  // below inputs of a dozen tokens: the per-query normaliser path
  return true;
}

std::unique_ptr<config::SchemeSettings> make_fire_settings() { return config::make_settings<FireSettings>(); }

std::shared_ptr<RelativeSchemeImpl> make_fire_scheme(const config::ModelConfig& c) {
  const auto& f = c.position.settings<FireSettings>();
  return std::make_shared<FireImpl>(c.num_attention_heads, f.hidden_size, f.init_c, f.init_threshold);
}

FireImpl::FireImpl(int64_t num_heads, int64_t hidden_size, double init_c, double init_threshold) {
  TORCH_CHECK(hidden_size >= 1, "fire: hidden_size must be >= 1, got ", hidden_size);
  mlp_in = register_module("mlp_in", torch::nn::Linear(1, hidden_size));
  mlp_out = register_module("mlp_out", torch::nn::Linear(hidden_size, num_heads));
  c_ = register_parameter("c", torch::full({1}, init_c));
  threshold_ = register_parameter("threshold", torch::full({1}, init_threshold));
}

torch::Tensor FireImpl::mlp(const torch::Tensor& x) const {
  auto hidden = torch::relu(torch::linear(x.unsqueeze(-1), mlp_in->weight, mlp_in->bias));  // [..., hidden]
  return torch::linear(hidden, mlp_out->weight, mlp_out->bias);                             // [..., H]
}

torch::Tensor FireImpl::bias(int64_t length) const {
  const auto opts = c_.options();
  auto c = c_.abs().clamp_min(1e-6);                                           // [1]
  auto threshold = threshold_.abs().clamp_min(1.0);                            // [1]
  if (threshold.item<double>() >= static_cast<double>(length - 1)) {
    // Every query i ≤ L−1 ≤ T: normaliser ψ(T), a function of j − i only.
    auto r = torch::arange(-(length - 1), length, opts);                        // [2L−1]
    auto x = torch::sign(r) * torch::log1p(c * r.abs()) / torch::log1p(c * threshold);
    return toeplitz_from_offsets(mlp(x).t(), length);                           // [H, L, L]
  }
  auto pos = torch::arange(length, opts);                                      // [L]
  auto rel = pos.unsqueeze(0) - pos.unsqueeze(1);                              // [L, L]: j − i
  auto norm = torch::log1p(c * torch::maximum(pos, threshold));                // [L]: ψ(max(T, i))
  auto x = torch::sign(rel) * torch::log1p(c * rel.abs()) / norm.unsqueeze(1); // [L, L]
  return mlp(x).permute({2, 0, 1});                                            // [H, L, L]
}

std::string FireImpl::describe() const { return "MLP hidden " + std::to_string(mlp_in->weight.size(0)); }

double FireImpl::flops(int64_t batch, int64_t length) const {
  const double hidden = static_cast<double>(mlp_in->weight.size(0)), H = static_cast<double>(mlp_out->weight.size(0));
  const double points = static_cast<double>(length) * length;  // upper bound: the L² path
  return points * 2.0 * hidden * (1.0 + H) + static_cast<double>(batch) * H * length * length;
}

torch::Tensor FireImpl::offset_profile(int64_t n) const {
  // The bias of queries below the threshold (normaliser ψ(T)) against j − i.
  torch::NoGradGuard no_grad;
  auto c = c_.abs().clamp_min(1e-6);
  auto threshold = torch::maximum(threshold_.abs().clamp_min(1.0), torch::full({1}, static_cast<double>(n - 1), c_.options()));
  auto r = torch::arange(-(n - 1), n, c_.options());
  auto x = torch::sign(r) * torch::log1p(c * r.abs()) / torch::log1p(c * threshold);
  return mlp(x).t().to(torch::kCPU, torch::kDouble);                           // [H, 2n−1]
}

}  // namespace tisa::model
