// ALiBi (model/position/alibi.h) against the goldens ../shared/golden/schemes/alibi_* (the
// authors' get_slopes, symmetric encoder form): slopes for H = 3, 8, 12 (two not powers of two),
// logits and the gradients of q and k, in float64 and float32.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "model/position/alibi.h"
#include "scheme_golden.h"

namespace {

using tisa::test::check_scheme_golden;
using tisa::test::load_scheme_golden;

class AlibiGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(AlibiGolden, SlopesLogitsAndGradientsMatch) {
  TISA_REQUIRE_SHARED(std::string("golden/schemes/") + GetParam());
  auto golden = load_scheme_golden(GetParam());
  const int64_t H = golden.tensors.at("q").size(1);
  auto slopes = tisa::model::alibi_slopes(H);
  EXPECT_TRUE(tisa::test::close(torch::tensor(slopes, torch::kDouble), golden.tensors.at("slopes"), 0, 1e-15, "slopes"));
  for (auto dtype : {torch::kDouble, torch::kFloat}) {
    tisa::model::AlibiImpl alibi(H);
    check_scheme_golden(alibi, golden, {}, dtype);
  }
}

INSTANTIATE_TEST_SUITE_P(Files, AlibiGolden,
                         ::testing::Values("alibi_b2_h3_l7_d8.safetensors", "alibi_b1_h12_l20_d4.safetensors",
                                           "alibi_b1_h8_l20_d4.safetensors"));

TEST(Alibi, SlopesOfEightHeadsArePowersOfOneHalf) {
  auto s = tisa::model::alibi_slopes(8);  // 2^-1 … 2^-8 (the paper's example)
  for (int i = 0; i < 8; ++i) EXPECT_DOUBLE_EQ(s[static_cast<size_t>(i)], std::pow(0.5, i + 1));
}

TEST(Alibi, ProfileIsMinusSlopeTimesDistance) {
  tisa::model::AlibiImpl alibi(2);
  auto p = alibi.offset_profile(3);  // [2, 5], r = −2 … 2
  EXPECT_FLOAT_EQ(p[0][0].item<float>(), -2 * 0.0625f);
  EXPECT_FLOAT_EQ(p[1][4].item<float>(), -2 * 0.00390625f);
  EXPECT_FLOAT_EQ(p[0][2].item<float>(), 0.0f);
}

}  // namespace
