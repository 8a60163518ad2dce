// FIRE, functional interpolation for relative positions (Li et al. 2023, "Functional Interpolation
// for Relative Positions Improves Long Context Transformers"): a learned per-head bias
//   bias[h, i, j] = f_θ(x_ij)_h,   x_ij = sign(j − i) · ψ(|j − i|) / ψ(max(T, i)),   ψ(x) = log(c·x + 1),
// with f_θ an MLP 1 → hidden (ReLU) → H, and c, T learned scalars (used as |c| ≥ 1e-6 and
// |T| ≥ 1). The paper's causal form feeds ψ(i − j) for j ≤ i; for this bidirectional encoder the
// offset keeps its sign so that the MLP can tell left from right (ours). Added after 1/√d, before
// the mask. While T ≥ L − 1 every query shares the normaliser ψ(T) and the bias is a function of
// j − i: the MLP runs on the 2L−1 offsets; otherwise on all L² pairs. Once per forward
// (begin_forward). Parameters: mlp_in (Linear 1→hidden), mlp_out (Linear hidden→H), c [1],
// threshold [1]. Tested against a direct evaluation of the formula (tests/model/position/fire_test.cpp).
#pragma once
#include <torch/nn/modules/linear.h>

#include "config/config.h"
#include "model/position/relative_scheme.h"

namespace tisa::model {

// Settings of the fire scheme: model.position.fire.
struct FireSettings {
  static constexpr const char* kName = "fire";
  int64_t hidden_size = 32;       // MLP 1 -> hidden -> heads
  double init_c = 0.1;            // psi(x) = log(c x + 1), c learned
  double init_threshold = 512.0;  // normaliser psi(max(threshold, i)), threshold learned
  void visit(config::FieldVisitor& v) {
    v.field("hidden_size", hidden_size, "hidden units of the MLP");
    v.field("init_c", init_c, "initial c of psi(x) = log(c x + 1)");
    v.field("init_threshold", init_threshold, "initial threshold L of the normaliser psi(max(L, i))");
  }
  void validate(const config::ModelConfig& model, bool selected, config::SettingsProblems& p) const;
  // "tiny": an MLP of 8 units and a threshold of 6 positions.
  bool apply_preset(const std::string& preset, const config::ModelConfig& model);
  static std::vector<std::string> presets() { return {"tiny"}; }
};

struct FireImpl : LogitBiasScheme {
  FireImpl(int64_t num_heads, int64_t hidden_size, double init_c, double init_threshold);
  std::string describe() const override;
  double flops(int64_t batch, int64_t length) const override;
  torch::Tensor offset_profile(int64_t n) const override;

  // f_θ applied to x [...]: [..., H].
  torch::Tensor mlp(const torch::Tensor& x) const;
  // bias[h, i, j]: [H, L, L].
  torch::Tensor bias(int64_t length) const override;

  torch::nn::Linear mlp_in{nullptr}, mlp_out{nullptr};
  torch::Tensor c_, threshold_;  // [1] each
};
TORCH_MODULE(Fire);

std::shared_ptr<RelativeSchemeImpl> make_fire_scheme(const config::ModelConfig& c);

}  // namespace tisa::model
