// KERPLE-log (Chi et al. 2022, "KERPLE: Kernelized Relative Positional Embedding for Length
// Extrapolation"), the logarithmic kernel in its symmetric encoder form: a learned per-head bias
//   bias[h, i, j] = −r1_h · log(1 + r2_h · |j − i|),   r1, r2 > 0,
// added after 1/√d and before the mask. Parameters `r1`, `r2` [H] hold the values themselves and
// are clamped to ≥ 1e-2 in the forward (the official code clamps them in place), so a gradient
// step cannot make the kernel non-conditionally-positive-definite; init r1 ~ U(0, 2),
// r2 ~ U(0, 1) as the official code (the bounds are settings, model.position.kerple_log). The [H, L, L] bias is computed once per forward from the 2L−1
// offsets. Golden: ../shared/golden/schemes/kerple_log_* (tests/model/position/kerple_log_test.cpp).
#pragma once
#include "config/config.h"
#include "model/position/relative_scheme.h"

namespace tisa::model {

// Settings of the kerple_log scheme: model.position.kerple_log.
struct KerpleLogSettings {
  static constexpr const char* kName = "kerple_log";
  double init_r1_max = 2.0;  // r1 ~ U(0, init_r1_max) at initialisation (official: 2)
  double init_r2_max = 1.0;  // r2 ~ U(0, init_r2_max) at initialisation (official: 1)
  void visit(config::FieldVisitor& v) {
    v.field("init_r1_max", init_r1_max, "r1 ~ U(0, init_r1_max) at initialisation");
    v.field("init_r2_max", init_r2_max, "r2 ~ U(0, init_r2_max) at initialisation");
  }
  void validate(const config::ModelConfig& model, bool selected, config::SettingsProblems& p) const;
};

struct KerpleLogImpl : OffsetBiasScheme {
  explicit KerpleLogImpl(int64_t num_heads, const KerpleLogSettings& settings = {});
  std::string describe() const override { return "log kernel"; }
  double flops(int64_t batch, int64_t length) const override;

  // −r1_h log(1 + r2_h |r|) for r = −(L−1) … L−1: [H, 2L−1].
  torch::Tensor scores(int64_t length) const override;

  torch::Tensor r1_, r2_;  // [H] each
};
TORCH_MODULE(KerpleLog);

std::shared_ptr<RelativeSchemeImpl> make_kerple_log_scheme(const config::ModelConfig& c);

}  // namespace tisa::model
