// TISA bias; see tisa.h.
#include "model/position/tisa.h"

namespace tisa::model {

void TisaSettings::validate(const config::ModelConfig&, bool, config::SettingsProblems& p) const {
  p.at_least("kernels", kernels, 1);
  p.non_negative("init_offset_std", init_offset_std);
  p.non_negative("init_amplitude_std", init_amplitude_std);
  p.non_negative("init_sharpness_std", init_sharpness_std);
  p.finite("init_amplitude_mean", init_amplitude_mean);
  p.finite("init_sharpness_mean", init_sharpness_mean);
}

std::optional<config::PositionSharing> TisaSettings::legacy_sharing() const {
  if (!per_layer) return config::PositionSharing::kModel;
  return std::nullopt;
}

bool TisaSettings::apply_preset(const std::string& preset, const config::ModelConfig&) {
  if (preset != "tiny") return false;
    kernels = 2;
  return true;
}

std::unique_ptr<config::SchemeSettings> make_tisa_settings() { return config::make_settings<TisaSettings>(); }

std::shared_ptr<RelativeSchemeImpl> make_tisa_scheme(const config::ModelConfig& c) {
  const auto& t = c.position.settings<TisaSettings>();
  TisaInit init{t.init_offset_std, t.init_amplitude_mean, t.init_amplitude_std, t.init_sharpness_mean,
                t.init_sharpness_std};
  return std::make_shared<TisaImpl>(c.num_attention_heads, t.kernels, init);
}

TisaImpl::TisaImpl(int64_t num_heads, int64_t num_kernels, const TisaInit& init) {
  TORCH_CHECK(num_kernels > 0, "tisa: kernels must be > 0, got ", num_kernels);
  offsets_ = register_parameter("offsets", torch::randn({num_kernels, num_heads}) * init.offset_std);
  amplitudes_ = register_parameter(
      "amplitudes", torch::randn({num_kernels, num_heads}) * init.amplitude_std + init.amplitude_mean);
  sharpness_ = register_parameter(
      "sharpness", torch::randn({num_kernels, num_heads}) * init.sharpness_std + init.sharpness_mean);
}

torch::Tensor TisaImpl::scores(int64_t length) const {
  auto r = torch::arange(-(length - 1), length, offsets_.options());                    // [2L−1]
  auto diff = r.view({1, 1, -1}) - offsets_.unsqueeze(-1);                              // [S, H, 2L−1]
  auto k = amplitudes_.unsqueeze(-1) * torch::exp(-sharpness_.abs().unsqueeze(-1) * diff * diff);
  return k.sum(0);                                                                      // [H, 2L−1]
}

std::string TisaImpl::describe() const { return "S=" + std::to_string(offsets_.size(0)); }

double TisaImpl::flops(int64_t batch, int64_t length) const {
  const double H = static_cast<double>(offsets_.size(1)), S = static_cast<double>(offsets_.size(0));
  return 6.0 * S * H * (2 * length - 1)          // kernel evaluations, once per forward
         + static_cast<double>(batch) * H * length * length;  // adding the bias
}

}  // namespace tisa::model
