// RoPE (model/position/rope.h) against the goldens ../shared/golden/schemes/rope_* (transformers
// 4.30 LLaMA apply_rotary_pos_emb, float64 cos/sin): logits and the gradients of q and k, in float64
// and float32; plus the property that makes it relative: q̃_m·k̃_n depends on m − n only.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "model/position/rope.h"
#include "scheme_golden.h"

namespace {

using tisa::test::check_scheme_golden;
using tisa::test::load_scheme_golden;

class RopeGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(RopeGolden, LogitsAndGradientsMatch) {
  TISA_REQUIRE_SHARED(std::string("golden/schemes/") + GetParam());
  auto golden = load_scheme_golden(GetParam());
  const int64_t H = golden.tensors.at("q").size(1), d = golden.tensors.at("q").size(3);
  EXPECT_EQ(golden.metadata.at("base"), "10000.0");
  for (auto dtype : {torch::kDouble, torch::kFloat}) {
    tisa::model::RopeImpl rope(H, d, 10000.0);
    check_scheme_golden(rope, golden, {}, dtype);
  }
}

INSTANTIATE_TEST_SUITE_P(Files, RopeGolden,
                         ::testing::Values("rope_b2_h3_l7_d8.safetensors", "rope_b1_h2_l64_d16.safetensors"));

TEST(Rope, DotProductDependsOnOffsetOnly) {
  torch::manual_seed(5);
  tisa::model::RopeImpl rope(1, 8, 10000.0);
  auto q = torch::randn({1, 1, 1, 8}, torch::kDouble).expand({1, 1, 12, 8}).contiguous();
  auto k = torch::randn({1, 1, 1, 8}, torch::kDouble).expand({1, 1, 12, 8}).contiguous();
  rope.transform_qk(q, k);
  auto s = torch::matmul(q, k.transpose(-1, -2))[0][0];  // [12, 12], same q and k rows everywhere
  for (int64_t i = 1; i < 12; ++i)
    for (int64_t j = 1; j < 12; ++j)
      EXPECT_NEAR(s[i][j].item<double>(), s[i - 1][j - 1].item<double>(), 1e-12) << i << "," << j;
}

TEST(Rope, BaseIsConfigurable) {
  tisa::config::ModelConfig c;
  c.hidden_size = 16;
  c.num_attention_heads = 2;
  c.position.settings<tisa::model::RopeSettings>().base = 500.0;
  auto s = tisa::model::make_rope_scheme(c);
  EXPECT_EQ(s->describe(), "base 500");
  EXPECT_EQ(s->parameter_count(), 0);
  auto q = torch::zeros({1, 1, 3, 8}, torch::kDouble);
  q.select(3, 0).fill_(1.0);  // x₁[0] = 1: rotates with θ_0 = 1 whatever the base
  q.select(3, 1).fill_(1.0);  // x₁[1] = 1: θ_1 = base^(−2/8)
  auto k = q.clone();
  s->transform_qk(q, k);
  EXPECT_NEAR(q[0][0][2][1].item<double>(), std::cos(2 * std::pow(500.0, -0.25)), 1e-12);
  EXPECT_NEAR(q[0][0][2][5].item<double>(), std::sin(2 * std::pow(500.0, -0.25)), 1e-12);
}

}  // namespace
