// KERPLE-log (model/position/kerple_log.h) against the golden
// ../shared/golden/schemes/kerple_log_b2_h3_l9_d8.safetensors: logits and the gradients of q, k,
// r1 and r2, in float64 and float32.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "config/config_loader.h"
#include "model/position/kerple_log.h"
#include "model/position/registry.h"
#include "scheme_golden.h"
#include "support/expect_error.h"

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

// The scheme's settings (its own struct, KerpleLogSettings) reach the config through the registry
// line alone: --set, unknown keys and validation work without any edit of src/config/.
TEST(KerpleLog, SettingsComeFromTheConfig) {
  auto c = tisa::config::config_from_overrides({"model.position.relative=kerple_log", "model.num_attention_heads=4",
                                                "model.hidden_size=64", "model.position.kerple_log.init_r1_max=0.5"});
  EXPECT_EQ(c.model.position.settings<tisa::model::KerpleLogSettings>().init_r1_max, 0.5);
  auto schemes = tisa::model::make_configured_schemes(c.model);
  ASSERT_EQ(schemes.size(), static_cast<size_t>(c.model.num_hidden_layers));  // per_layer
  auto* kerple = dynamic_cast<tisa::model::KerpleLogImpl*>(schemes[0].get());
  ASSERT_NE(kerple, nullptr);
  EXPECT_LE(kerple->r1_.max().item<float>(), 0.5f);
  std::string msg = tisa::test::error_of(
      [] { tisa::config::config_from_overrides({"model.position.kerple_log.init_r3_max=1"}); });
  EXPECT_HAS(msg, "model.position.kerple_log.init_r3_max: unknown key (did you mean 'init_r1_max'?); known keys of "
                  "model.position.kerple_log: init_r1_max, init_r2_max");
  msg = tisa::test::error_of([] { tisa::config::config_from_overrides({"model.position.kerple_log.init_r2_max=0"}); });
  EXPECT_HAS(msg, "model.position.kerple_log.init_r2_max: must be a positive finite number, got 0.0");
}

}  // namespace
