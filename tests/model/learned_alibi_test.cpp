// ALiBi with trainable slopes (model/position/learned_alibi.h): a new module is ALiBi exactly
// (against AlibiImpl, H not a power of two), the slopes' gradient matches the hand-derived
// d bias / d s_h = −exp(s_h)|j − i|, the slopes stay positive, and the registry line alone makes
// it a scheme of the config with one module per layer.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "config/config_loader.h"
#include "model/position/alibi.h"
#include "model/position/learned_alibi.h"
#include "model/position/registry.h"

namespace {

TEST(LearnedAlibi, StartsAsAlibi) {
  for (int64_t heads : {4, 6}) {
    tisa::model::LearnedAlibiImpl learned(heads);
    tisa::model::AlibiImpl fixed(heads);
    torch::NoGradGuard no_grad;
    const auto want = fixed.bias(9, torch::TensorOptions().dtype(torch::kFloat));
    EXPECT_TRUE(torch::allclose(learned.bias(9), want, 1e-6, 1e-6)) << heads << " heads";
    EXPECT_TRUE(torch::allclose(learned.offset_profile(5), fixed.offset_profile(5), 1e-6, 1e-7)) << heads << " heads";
  }
}

TEST(LearnedAlibi, SlopeGradientIsTheHandDerivedOne) {
  const int64_t H = 3, L = 5;
  tisa::model::LearnedAlibiImpl scheme(H);
  {
    torch::NoGradGuard no_grad;
    scheme.log_slopes_.copy_(torch::tensor({-1.0, 0.0, 0.5}));
  }
  torch::manual_seed(1);
  auto q = torch::randn({2, H, L, 4});
  auto logits = torch::zeros({2, H, L, L});
  auto w = torch::randn({2, H, L, L});
  scheme.begin_forward(L);
  (scheme.add_to_logits(logits, q) * w).sum().backward();
  // d/ds_h Σ w[b, h, i, j] · (−exp(s_h) |j − i|) = −exp(s_h) Σ_{b, i, j} w[b, h, i, j] |j − i|.
  auto pos = torch::arange(L, torch::kFloat);
  auto distance = (pos.unsqueeze(0) - pos.unsqueeze(1)).abs();  // [L, L]
  auto want = -scheme.log_slopes_.detach().exp() * (w * distance).sum({0, 2, 3});
  EXPECT_TRUE(torch::allclose(scheme.log_slopes_.grad(), want, 1e-5, 1e-5))
      << scheme.log_slopes_.grad() << "\n" << want;
}

TEST(LearnedAlibi, SlopesStayPositive) {
  tisa::model::LearnedAlibiImpl scheme(2);
  {
    torch::NoGradGuard no_grad;
    scheme.log_slopes_.fill_(-30.0);  // any step of s keeps m = exp(s) > 0: the bias never rewards distance
  }
  auto p = scheme.offset_profile(3);
  EXPECT_TRUE((p <= 0).all().item<bool>());
  EXPECT_LT(p[0][0].item<double>(), 0.0);
}

TEST(LearnedAlibi, IsASchemeOfTheConfig) {
  auto c = tisa::config::config_from_overrides({"model.position.relative=learned_alibi", "model.num_attention_heads=4",
                                                "model.hidden_size=64"});
  auto schemes = tisa::model::make_configured_schemes(c.model);
  ASSERT_EQ(schemes.size(), static_cast<size_t>(c.model.num_hidden_layers));  // per_layer, as every learned scheme
  auto* learned = dynamic_cast<tisa::model::LearnedAlibiImpl*>(schemes[0].get());
  ASSERT_NE(learned, nullptr);
  EXPECT_EQ(learned->parameter_count(), 4);
  EXPECT_NE(tisa::model::describe_position(c.model).find("learned_alibi (learned slopes"), std::string::npos)
      << tisa::model::describe_position(c.model);
}

}  // namespace
