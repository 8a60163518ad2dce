// The registry of position schemes (model/position/registry.h): every configured name has a
// factory, sharing (per_layer / per_module / model) means the same for every scheme with
// parameters, the legacy shaw/tisa switches still select theirs, descriptions and parameter
// counts come from the schemes, and a tiny ALBERT trains (forward + backward, finite gradients
// reaching every scheme parameter) with each scheme, also on sequences longer than its training
// length where the scheme allows it.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>

#include "common/error.h"
#include "model/albert.h"
#include "model/position/registry.h"
#include "scheme_variants.h"
#include "model/position/shaw.h"
#include "model/position/tisa.h"

namespace {

using tisa::config::PositionSharing;

tisa::config::ModelConfig grouped(std::string s, PositionSharing sharing) {
  tisa::test::SchemeVariant v{"x", false, s, ""};
  auto c = tisa::test::tiny_model(v);
  c.num_hidden_layers = 4;
  c.num_hidden_groups = 2;
  c.inner_group_num = 2;
  c.position.sharing = sharing;
  return c;
}

TEST(PositionRegistry, EveryConfigNameHasAFactory) {
  auto names = tisa::model::relative_scheme_names();
  // The config's names are the registry's (installed by the test main), in table order.
  EXPECT_EQ(names, tisa::config::position_scheme_names());
  EXPECT_EQ(names.front(), "none");
}

TEST(PositionRegistry, SharingMeansTheSameForEveryScheme) {
  // Every scheme of the registry: one with parameters follows position.sharing, one without has
  // a single module.
  for (const auto& name : tisa::model::relative_scheme_names()) {
    if (name == "none") continue;
    const auto per_layer_modules = tisa::model::make_configured_schemes(grouped(name, PositionSharing::kPerLayer));
    ASSERT_FALSE(per_layer_modules.empty()) << name;
    if (per_layer_modules.front()->parameter_count() == 0) {
      EXPECT_EQ(per_layer_modules.size(), 1u) << name << ": no parameters, one module";
      continue;
    }
    EXPECT_EQ(per_layer_modules.size(), 8u) << name;  // 4 layers x 2 inner
    EXPECT_EQ(tisa::model::make_configured_schemes(grouped(name, PositionSharing::kPerModule)).size(), 4u) << name;
    EXPECT_EQ(tisa::model::make_configured_schemes(grouped(name, PositionSharing::kModel)).size(), 1u) << name;
    // per_module: layer application i uses the module of its group and inner layer.
    tisa::model::AlbertTransformer t(grouped(name, PositionSharing::kPerModule));
    EXPECT_EQ(t->scheme_for(0, 1), t->scheme_for(1, 1)) << name;   // layers 0, 1: group 0
    EXPECT_NE(t->scheme_for(1, 1), t->scheme_for(2, 1)) << name;   // layer 2: group 1
    EXPECT_NE(t->scheme_for(2, 0), t->scheme_for(2, 1)) << name;
    tisa::model::AlbertTransformer per_layer(grouped(name, PositionSharing::kPerLayer));
    EXPECT_NE(per_layer->scheme_for(0, 1), per_layer->scheme_for(1, 1)) << name;
  }
  EXPECT_TRUE(tisa::model::make_configured_schemes(grouped("none", PositionSharing::kPerLayer)).empty());
}

TEST(PositionRegistry, LegacySwitchesSelectTheirSharing) {
  auto c = grouped("shaw", PositionSharing::kPerLayer);
  c.position.settings<tisa::model::ShawSettings>().per_layer = false;
  EXPECT_EQ(tisa::model::effective_sharing(c), PositionSharing::kModel);
  c.position.settings<tisa::model::ShawSettings>().per_attention_module = true;
  EXPECT_EQ(tisa::model::effective_sharing(c), PositionSharing::kPerModule);
  auto t = grouped("tisa", PositionSharing::kPerLayer);
  t.position.settings<tisa::model::TisaSettings>().per_layer = false;
  EXPECT_EQ(tisa::model::effective_sharing(t), PositionSharing::kModel);
}

TEST(PositionRegistry, DescriptionsAndCountsComeFromTheSchemes) {
  auto c = grouped("t5", PositionSharing::kPerModule);
  c.position.absolute = true;
  EXPECT_EQ(tisa::model::describe_position(c), "absolute (P=32) + t5 (8 buckets, max distance 16, per attention module)");
  EXPECT_EQ(tisa::model::positional_parameter_count(c), 32 * 8 + 4 * 8 * 4);
  c.position.relative = "alibi";
  EXPECT_EQ(tisa::model::describe_position(c), "absolute (P=32) + alibi (fixed slopes)");
  c.position.relative = "rope";
  c.position.absolute = false;
  EXPECT_EQ(tisa::model::describe_position(c), "rope (base 10000)");
  EXPECT_GT(tisa::model::scheme_flops(c, 2, 16), 0.0);
  // Asking never moves the RNG: the next model's init does not depend on it.
  torch::manual_seed(3);
  auto a = torch::randn({3});
  torch::manual_seed(3);
  (void)tisa::model::describe_position(grouped("tisa", PositionSharing::kPerLayer));
  EXPECT_TRUE(torch::equal(a, torch::randn({3})));
}

class EveryScheme : public ::testing::TestWithParam<tisa::test::SchemeVariant> {};

TEST_P(EveryScheme, TrainsAndRunsPastTheTrainingLength) {
  const auto& v = GetParam();
  torch::manual_seed(4);
  tisa::model::AlbertForPreTraining m(tisa::test::tiny_model(v));
  const auto r = tisa::test::forward_backward(m, tisa::model::AttentionBackend::kEager, torch::kCPU);
  EXPECT_TRUE(torch::isfinite(r.hidden).all().item<bool>()) << v.name;
  const std::string prefix = "albert.encoder." + v.relative + ".";
  for (const auto& p : m->named_parameters()) {
    if (p.key().rfind(prefix, 0) != 0) continue;
    ASSERT_TRUE(r.grads.count(p.key())) << p.key() << " gets no gradient";
    EXPECT_TRUE(torch::isfinite(r.grads.at(p.key())).all().item<bool>()) << p.key();
    EXPECT_GT(r.grads.at(p.key()).abs().sum().item<double>(), 0.0) << p.key();
  }
  if (!v.absolute) {  // no table: any length (tiny_model's table has 32 rows)
    torch::NoGradGuard no_grad;
    m->eval();
    auto out = m->forward(torch::randint(5, 50, {1, 40}), {}, {});
    EXPECT_TRUE(torch::isfinite(out.encoder.last_hidden_state).all().item<bool>()) << v.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Schemes, EveryScheme, ::testing::ValuesIn(tisa::test::scheme_variants()),
                         [](const auto& info) { return tisa::test::variant_test_name(info.param); });

}  // namespace
