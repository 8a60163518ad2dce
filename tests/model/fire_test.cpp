// FIRE (model/position/fire.h) against a direct evaluation of its formula, element by element in
// float64 with scalar operations:
//   bias[h, i, j] = W2_h · relu(W1 · x_ij + b1) + b2_h,
//   x_ij = sign(j − i) · log(c|j − i| + 1) / log(c · max(T, i) + 1),
// for a threshold T above the length (the Toeplitz path) and below it (the per-query path), and
// the gradients of Σ(bias · G) with respect to every parameter, against autograd through the same
// scalar evaluation.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "close.h"
#include "model/position/fire.h"

namespace {

using tisa::test::close;

// The formula, one element at a time (autograd through scalar tensor ops).
torch::Tensor direct(const tisa::model::FireImpl& f, int64_t L) {
  auto c = f.c_.abs().clamp_min(1e-6);
  auto T = f.threshold_.abs().clamp_min(1.0);
  const int64_t H = f.mlp_out->weight.size(0);
  std::vector<torch::Tensor> rows;
  for (int64_t i = 0; i < L; ++i) {
    auto norm = torch::log(c * torch::maximum(T, torch::full({1}, static_cast<double>(i), torch::kDouble)) + 1);
    for (int64_t j = 0; j < L; ++j) {
      const double r = static_cast<double>(j - i);
      const double sign = r > 0 ? 1.0 : r < 0 ? -1.0 : 0.0;
      auto x = sign * torch::log(c * std::abs(r) + 1) / norm;                            // [1]
      auto hidden = torch::relu(f.mlp_in->weight.view({-1}) * x + f.mlp_in->bias);      // [hidden]
      rows.push_back(torch::mv(f.mlp_out->weight, hidden) + f.mlp_out->bias);            // [H]
    }
  }
  return torch::stack(rows).view({L, L, H}).permute({2, 0, 1});                          // [H, L, L]
}

class FireFormula : public ::testing::TestWithParam<double> {};

TEST_P(FireFormula, BiasAndGradientsMatchTheFormula) {
  torch::manual_seed(7);
  tisa::model::FireImpl fire(3, 5, 0.3, GetParam());
  fire.to(torch::kDouble);
  const int64_t L = 9;
  auto G = torch::randn({3, L, L}, torch::kDouble);
  auto ours = fire.bias(L);
  (ours * G).sum().backward();
  std::map<std::string, torch::Tensor> grads;
  for (const auto& p : fire.named_parameters()) grads[p.key()] = p.value().grad().clone();
  fire.zero_grad();
  auto ref = direct(fire, L);
  EXPECT_TRUE(close(ours, ref, 1e-12, 1e-10, "bias"));
  (ref * G).sum().backward();
  for (const auto& p : fire.named_parameters())
    EXPECT_TRUE(close(grads.at(p.key()), p.value().grad(), 1e-12, 1e-9, "grad " + p.key()));
}

// 100: T ≥ L − 1 (the 2L−1-offset path); 4: T < L − 1 (the L² path).
INSTANTIATE_TEST_SUITE_P(Thresholds, FireFormula, ::testing::Values(100.0, 4.0));

TEST(Fire, ThresholdAndCAreLearned) {
  tisa::config::ModelConfig c;
  c.num_attention_heads = 4;
  c.position.settings<tisa::model::FireSettings>().hidden_size = 8;
  auto s = tisa::model::make_fire_scheme(c);
  EXPECT_EQ(s->parameter_count(), (8 + 8) + (8 * 4 + 4) + 2);
  auto p = s->offset_profile(5);
  EXPECT_EQ(p.sizes(), (torch::IntArrayRef{4, 9}));
}

}  // namespace
