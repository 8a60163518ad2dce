// TISA, translation-invariant self-attention (SPEC §2; Wennberg & Henter 2021): a per-head scalar
// bias f_h(j − i) on the attention logits, added after the 1/√d scaling and before the mask, with
//   f_h(r) = Σ_{s=1..S} a_{s,h} · exp(−|b_{s,h}| · (r − c_{s,h})²).
// We follow the paper's r = j − i; the official code's parameters convert with
// c_ours = −1 − c_official (a, b unchanged), see tests/model/tisa_test.cpp.
// Parameters (each [S, H] = kernels × heads, as the official module): `offsets` c,
// `amplitudes` a, `sharpness` b. The [H, L, L] bias is computed once per forward in
// begin_forward() (H·S·(2L−1) kernel evaluations plus a gather) and shared by the whole batch.
// Sharing (one module per layer or for the model) is position.sharing (legacy: tisa.per_layer).
#pragma once
#include "config/config.h"
#include "model/position/relative_scheme.h"

namespace tisa::model {

// Settings of the tisa scheme: model.position.tisa.
struct TisaSettings {
  static constexpr const char* kName = "tisa";
  int64_t kernels = 5;       // S radial-basis kernels per head
  bool per_layer = true;     // legacy: false = position.sharing model (the paper counts 3*S*H*L)
  double init_offset_std = 5.0;     // c ~ N(0, 5^2)
  double init_amplitude_mean = 0.1; // a ~ N(0.1, 0.01^2)
  double init_amplitude_std = 0.01;
  double init_sharpness_mean = 0.1; // b ~ N(0.1, 0.01^2)
  double init_sharpness_std = 0.01;
  void visit(config::FieldVisitor& v) {
    v.field("kernels", kernels, "number of kernels S per head");
    v.field("per_layer", per_layer, "one module per layer (false: shared across layers)");
    v.field("init_offset_std", init_offset_std, "std of the kernel offsets c at initialisation");
    v.field("init_amplitude_mean", init_amplitude_mean, "mean of the amplitudes a at initialisation");
    v.field("init_amplitude_std", init_amplitude_std, "std of the amplitudes a at initialisation");
    v.field("init_sharpness_mean", init_sharpness_mean, "mean of the sharpness b at initialisation");
    v.field("init_sharpness_std", init_sharpness_std, "std of the sharpness b at initialisation");
  }
  void validate(const config::ModelConfig& model, bool selected, config::SettingsProblems& p) const;
  // "tiny": two kernels.
  bool apply_preset(const std::string& preset, const config::ModelConfig& model);
  static std::vector<std::string> presets() { return {"tiny"}; }
  std::optional<config::PositionSharing> legacy_sharing() const;
};

struct TisaInit {
  double offset_std = 5.0;        // c ~ N(0, 5²)
  double amplitude_mean = 0.1;    // a ~ N(0.1, 0.01²)
  double amplitude_std = 0.01;
  double sharpness_mean = 0.1;    // b ~ N(0.1, 0.01²)
  double sharpness_std = 0.01;
};

struct TisaImpl : OffsetBiasScheme {
  TisaImpl(int64_t num_heads, int64_t num_kernels, const TisaInit& init = {});
  std::string describe() const override;
  double flops(int64_t batch, int64_t length) const override;

  // f_h(r) for r = −(L−1) … L−1: [H, 2L−1].
  torch::Tensor scores(int64_t length) const override;

  torch::Tensor offsets_;     // c [S, H]
  torch::Tensor amplitudes_;  // a [S, H]
  torch::Tensor sharpness_;   // b [S, H]
};
TORCH_MODULE(Tisa);

// One module of the configured tisa scheme (registry.cpp).
std::shared_ptr<RelativeSchemeImpl> make_tisa_scheme(const config::ModelConfig& c);

}  // namespace tisa::model
