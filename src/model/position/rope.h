// RoPE, rotary position embeddings (Su et al. 2021, "RoFormer"), in the rotate-half convention of
// Hugging Face's LLaMA / ModernBERT: before q·kᵀ, each per-head query and key row at position m
// becomes
//   x̃_m = x_m · cos(m θ) + rotate_half(x_m) · sin(m θ),   rotate_half([x₁, x₂]) = [−x₂, x₁],
// with x₁, x₂ the two halves of the d features, θ_i = base^(−2i/d) for i < d/2 duplicated over both
// halves, and m = 0 … L−1 the token index. q̃_m·k̃_n then depends on m − n only. No parameters and
// no bias: the hook is transform_qk, so the fused path (SDPA on the rotated q, k) takes it too.
// cos/sin are evaluated in float64 and cast to q's dtype, cached per (L, dtype, device).
// Golden: ../shared/golden/schemes/rope_* (tests/model/position/rope_test.cpp).
#pragma once
#include "config/config.h"
#include "model/position/relative_scheme.h"

namespace tisa::model {

// Settings of the rope scheme: model.position.rope.
struct RopeSettings {
  static constexpr const char* kName = "rope";
  double base = 10000.0;  // theta_i = base^(-2i/d)
  void visit(config::FieldVisitor& v) { v.field("base", base, "rotary base: theta_i = base^(-2i/d)"); }
  void validate(const config::ModelConfig& model, bool selected, config::SettingsProblems& p) const;
};

struct RopeImpl : RelativeSchemeImpl {
  RopeImpl(int64_t num_heads, int64_t head_size, double base);
  void transform_qk(torch::Tensor& q, torch::Tensor& k) override;
  std::string describe() const override;
  double flops(int64_t batch, int64_t length) const override;

  // x [..., L, d] rotated by positions 0 … L−1.
  torch::Tensor rotate(const torch::Tensor& x);

 private:
  void ensure_tables(int64_t length, const torch::TensorOptions& options);

  int64_t num_heads_, head_size_;
  double base_;
  torch::Tensor cos_, sin_;  // [L, d] cache
};
TORCH_MODULE(Rope);

std::shared_ptr<RelativeSchemeImpl> make_rope_scheme(const config::ModelConfig& c);

}  // namespace tisa::model
