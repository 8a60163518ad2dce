// KERPLE-log (model/position/kerple_log.h) against the golden
// ../shared/golden/schemes/kerple_log_b2_h3_l9_d8.safetensors: logits and the gradients of q, k,
// r1 and r2, in float64 and float32.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "model/position/kerple_log.h"
#include "scheme_golden.h"

namespace {

TEST(KerpleLogGolden, LogitsAndGradientsMatch) {
  const char* file = "kerple_log_b2_h3_l9_d8.safetensors";
  TISA_REQUIRE_SHARED(std::string("golden/schemes/") + file);
  auto golden = tisa::test::load_scheme_golden(file);
  const int64_t H = golden.tensors.at("q").size(1);
  for (auto dtype : {torch::kDouble, torch::kFloat}) {
    tisa::model::KerpleLogImpl kerple(H);
    tisa::test::check_scheme_golden(kerple, golden, {{"r1", "r1"}, {"r2", "r2"}}, dtype);
  }
}

TEST(KerpleLog, ParametersStayPositive) {
  tisa::model::KerpleLogImpl kerple(2);
  {
    torch::NoGradGuard no_grad;
    kerple.r1_.fill_(-1.0);  // a gradient step past zero is clamped to the official eps 1e-2
    kerple.r2_.fill_(1.0);
  }
  auto p = kerple.offset_profile(2);  // r = −1, 0, 1
  EXPECT_NEAR(p[0][0].item<float>(), -0.01 * std::log(2.0), 1e-7);
}

}  // namespace
