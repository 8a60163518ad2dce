// T5 bucketed bias (model/position/t5.h) against the goldens ../shared/golden/schemes/t5_*
// (transformers 4.30 T5Attention._relative_position_bucket, bidirectional): buckets of j − i,
// logits and the gradients of q, k and the table, in float64 and float32 — including L = 300 past
// max_distance 128 and a case with 8 buckets / max distance 16.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "model/position/t5.h"
#include "scheme_golden.h"

namespace {

using tisa::test::check_scheme_golden;
using tisa::test::load_scheme_golden;

struct Case {
  const char* file;
  int64_t num_buckets, max_distance;
};

class T5Golden : public ::testing::TestWithParam<Case> {};

TEST_P(T5Golden, BucketsLogitsAndGradientsMatch) {
  const Case c = GetParam();
  TISA_REQUIRE_SHARED(std::string("golden/schemes/") + c.file);
  auto golden = load_scheme_golden(c.file);
  const int64_t H = golden.tensors.at("q").size(1), L = golden.tensors.at("q").size(2);
  EXPECT_EQ(golden.metadata.at("num_buckets"), std::to_string(c.num_buckets));
  auto pos = torch::arange(L, torch::kLong);
  auto buckets = tisa::model::t5_relative_bucket(pos.unsqueeze(0) - pos.unsqueeze(1), c.num_buckets, c.max_distance);
  EXPECT_TRUE(torch::equal(buckets, golden.tensors.at("buckets")));
  for (auto dtype : {torch::kDouble, torch::kFloat}) {
    tisa::model::T5BiasImpl t5(H, c.num_buckets, c.max_distance, 0.02);
    check_scheme_golden(t5, golden, {{"table", "table"}}, dtype);
  }
}

INSTANTIATE_TEST_SUITE_P(Files, T5Golden,
                         ::testing::Values(Case{"t5_b2_h3_l7_d8.safetensors", 32, 128},
                                           Case{"t5_b1_h2_l300_d4.safetensors", 32, 128},
                                           Case{"t5_b1_h2_l40_d4_nb8_md16.safetensors", 8, 16}));

TEST(T5, ConfigSetsBucketsAndDistance) {
  tisa::config::ModelConfig c;
  c.num_attention_heads = 4;
  c.position.settings<tisa::model::T5Settings>().num_buckets = 8;
  c.position.settings<tisa::model::T5Settings>().max_distance = 16;
  auto s = tisa::model::make_t5_scheme(c);
  EXPECT_EQ(s->parameter_count(), 8 * 4);
  EXPECT_EQ(s->describe(), "8 buckets, max distance 16");
}

}  // namespace
