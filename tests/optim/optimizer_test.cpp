// Hand-computed and property tests of the optimisers and gradient helpers: clipping, finiteness,
// skipped parameters, zero_grad, state validation, construction errors, NaN-free zero norms.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>

#include "common/error.h"
#include "config/config.h"
#include "optim/adamw.h"
#include "optim/grad_utils.h"
#include "optim/lamb.h"
#include "optim/optimizer.h"

namespace {

using tisa::optim::NamedParams;

at::Tensor param(std::vector<float> values) {
  return torch::tensor(values).requires_grad_(true);
}

TEST(GradUtils, GlobalNormAndClipHandComputed) {
  at::Tensor a = torch::tensor({3.0f}), b = torch::tensor({0.0f, 4.0f});
  EXPECT_FLOAT_EQ(tisa::optim::global_norm({a, b, at::Tensor()}).item<float>(), 5.0f);
  at::Tensor norm = tisa::optim::clip_grad_norm({a, b}, 1.0);  // scale 1/5
  EXPECT_FLOAT_EQ(norm.item<float>(), 5.0f);
  EXPECT_FLOAT_EQ(a.item<float>(), 0.6f);
  EXPECT_FLOAT_EQ(b[1].item<float>(), 0.8f);
  EXPECT_NEAR(tisa::optim::global_norm({a, b}).item<float>(), 1.0f, 1e-6);
}

TEST(GradUtils, ClipBelowThresholdOrDisabledLeavesGradientsBitwise) {
  at::Tensor a = torch::tensor({0.3f, -0.1f}), keep = a.clone();
  tisa::optim::clip_grad_norm({a}, 1.0);
  EXPECT_TRUE(at::equal(a, keep));
  at::Tensor big = torch::tensor({30.0f}), big_keep = big.clone();
  EXPECT_FLOAT_EQ(tisa::optim::clip_grad_norm({big}, 0.0).item<float>(), 30.0f);  // measure only
  EXPECT_TRUE(at::equal(big, big_keep));
  EXPECT_EQ(tisa::optim::global_norm({}).item<float>(), 0.0f);
}

TEST(GradUtils, FinitenessChecks) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  at::Tensor ok = torch::tensor({1.0f, 2.0f});
  EXPECT_TRUE(tisa::optim::all_finite({ok}));
  EXPECT_TRUE(tisa::optim::is_finite(tisa::optim::global_norm({ok})));
  for (float bad : {nan, inf, -inf}) {
    at::Tensor t = torch::tensor({1.0f, bad});
    EXPECT_FALSE(tisa::optim::all_finite({ok, t})) << bad;
    EXPECT_FALSE(tisa::optim::is_finite(tisa::optim::global_norm({ok, t}))) << bad;
  }
}

TEST(Lamb, ZeroParamAndZeroGradIsNaNFree) {
  // ‖w‖ = ‖u‖ = 0: ratio 1, nothing moves, nothing becomes NaN.
  NamedParams p{{"classifier.weight", torch::zeros({3}).requires_grad_(true)}};
  tisa::optim::Lamb opt(p, {});
  p[0].second.mutable_grad() = torch::zeros({3});
  opt.step(0.1);
  EXPECT_TRUE(at::equal(p[0].second, torch::zeros({3})));
  EXPECT_EQ(opt.last_trust_ratios().at("classifier.weight").item<float>(), 1.0f);
  EXPECT_TRUE(tisa::optim::all_finite({opt.state_dict().at("m.classifier.weight")}));
}

TEST(Lamb, FirstStepHandComputedAlbertForm) {
  // One element, no decay (bias name): m = 0.1g, v = 0.001g², u = 0.1g/(√0.001|g| + ε) ≈ 3.1623·sign(g).
  NamedParams p{{"dense.bias", param({1.0f})}};
  tisa::optim::Lamb opt(p, {});
  p[0].second.mutable_grad() = torch::tensor({0.5f});
  opt.step(0.01);
  const double u = 0.05 / (std::sqrt(0.001 * 0.25) + 1e-6);
  EXPECT_NEAR(p[0].second.item<float>(), 1.0 - 0.01 * u, 1e-6);
}

TEST(Optimizer, ParametersWithoutGradientAreSkipped) {
  NamedParams p{{"a.weight", param({1.0f, 2.0f})}, {"b.weight", param({3.0f})}};
  tisa::optim::AdamW opt(p, {});
  p[0].second.mutable_grad() = torch::tensor({0.1f, 0.2f});
  opt.step(1e-3);
  auto s = opt.state_dict();
  EXPECT_EQ(s.at("step.a.weight").item<int64_t>(), 1);
  EXPECT_EQ(s.at("step.b.weight").item<int64_t>(), 0);
  EXPECT_EQ(p[1].second.item<float>(), 3.0f);
  EXPECT_EQ(s.at("m.b.weight").item<float>(), 0.0f);
  EXPECT_EQ(opt.num_updates(), 1);
}

TEST(Optimizer, ZeroGradToNoneOrZero) {
  NamedParams p{{"w", param({1.0f})}};
  tisa::optim::Lamb opt(p, {});
  p[0].second.mutable_grad() = torch::tensor({2.0f});
  opt.zero_grad(false);
  ASSERT_TRUE(p[0].second.grad().defined());
  EXPECT_EQ(p[0].second.grad().item<float>(), 0.0f);
  opt.zero_grad();
  EXPECT_FALSE(p[0].second.grad().defined());
}

TEST(Optimizer, ConstructionErrors) {
  at::Tensor w = torch::ones({2});
  EXPECT_THROW(tisa::optim::Lamb(NamedParams{{"a", w}, {"a", torch::ones({2})}}, {}), tisa::Error);
  EXPECT_THROW(tisa::optim::Lamb(NamedParams{{"a", w}, {"b", w}}, {}), tisa::Error);
  EXPECT_THROW(tisa::optim::Lamb(NamedParams{{"", w}}, {}), tisa::Error);
  EXPECT_THROW(tisa::optim::Lamb(NamedParams{{"i", torch::ones({2}, at::kLong)}}, {}), tisa::Error);
  tisa::config::OptimizerConfig cfg;
  cfg.beta2 = 1.0;
  EXPECT_THROW(tisa::optim::make_optimizer(cfg, {{"a", w}}), tisa::Error);
}

TEST(Optimizer, FactoryPicksTypeAndOptions) {
  tisa::config::OptimizerConfig cfg;
  cfg.bias_correction = true;
  cfg.trust_ratio_all = true;
  auto lamb = tisa::optim::make_optimizer(cfg, {{"a", torch::ones({2})}});
  EXPECT_STREQ(lamb->kind(), "lamb");
  auto& options = dynamic_cast<tisa::optim::Lamb&>(*lamb).options();
  EXPECT_TRUE(options.bias_correction);
  EXPECT_TRUE(options.trust_ratio_all);
  cfg.type = tisa::config::OptimizerType::kAdamW;
  cfg.eps = 1e-8;
  auto adamw = tisa::optim::make_optimizer(cfg, {{"a", torch::ones({2})}});
  EXPECT_STREQ(adamw->kind(), "adamw");
  EXPECT_EQ(dynamic_cast<tisa::optim::AdamW&>(*adamw).options().eps, 1e-8);
}

TEST(Optimizer, LoadStateDictValidatesBeforeChanging) {
  NamedParams p{{"enc.weight", param({1.0f, 2.0f})}};
  tisa::optim::Lamb opt(p, {});
  auto good = opt.state_dict();
  for (auto& [k, t] : good) t = t.clone();
  good["m.enc.weight"].fill_(0.5);
  good["step.enc.weight"].fill_(7);

  auto missing = good;
  missing.erase("v.enc.weight");
  EXPECT_THROW(opt.load_state_dict(missing), tisa::Error);
  auto extra = good;
  extra["m.other.weight"] = torch::zeros({2});
  EXPECT_THROW(opt.load_state_dict(extra), tisa::Error);
  auto shape = good;
  shape["v.enc.weight"] = torch::zeros({3});
  EXPECT_THROW(opt.load_state_dict(shape), tisa::Error);
  auto float_step = good;
  float_step["step.enc.weight"] = torch::scalar_tensor(1.0);
  EXPECT_THROW(opt.load_state_dict(float_step), tisa::Error);
  EXPECT_EQ(opt.state_dict().at("m.enc.weight")[0].item<float>(), 0.0f);  // untouched so far

  opt.load_state_dict(good);
  EXPECT_EQ(opt.state_dict().at("m.enc.weight")[0].item<float>(), 0.5f);
  EXPECT_EQ(opt.state_dict().at("step.enc.weight").item<int64_t>(), 7);
}

}  // namespace
