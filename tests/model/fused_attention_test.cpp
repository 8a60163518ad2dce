// The fused attention path (SDPA, LibTorch ≥ 2.1) equals the eager softmax path in outputs and in
// the gradients of every parameter, per position scheme, on a batch with padding; and it is taken
// exactly where it may be (no Shaw value term, no probabilities requested).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>
#include <map>
#include <string>

#include "close.h"
#include "model/albert.h"
#include "model/fused_attention.h"
#include "scheme_variants.h"

namespace {

using tisa::model::AttentionBackend;
using tisa::test::close;

using Variant = tisa::test::SchemeVariant;
using tisa::test::tiny_model;

class FusedAttention : public ::testing::TestWithParam<Variant> {};

TEST_P(FusedAttention, EqualsEagerInOutputsAndGradients) {
  if (!tisa::model::fused_attention_available())
    GTEST_SKIP() << "this LibTorch has no scaled_dot_product_attention (< 2.1): the eager path is the only one";
  const Variant& v = GetParam();
  torch::manual_seed(11);
  tisa::model::AlbertForPreTraining model(tiny_model(v));
  model->train();  // dropout is 0 in tiny(): train mode still exercises the training branch
  const auto eager = tisa::test::forward_backward(model, AttentionBackend::kEager, torch::kCPU);
  const auto fused = tisa::test::forward_backward(model, AttentionBackend::kFused, torch::kCPU);
  EXPECT_TRUE(close(fused.hidden, eager.hidden, 1e-5, 1e-5, v.name + " hidden"));
  EXPECT_TRUE(close(fused.sop, eager.sop, 1e-5, 1e-5, v.name + " sop logits"));
  ASSERT_EQ(fused.grads.size(), eager.grads.size());
  for (const auto& [name, g] : eager.grads) {
    ASSERT_TRUE(fused.grads.count(name)) << name;
    EXPECT_TRUE(close(fused.grads.at(name), g, 1e-5, 1e-4, v.name + " grad " + name));
  }
}

TEST_P(FusedAttention, TakenExactlyWhereAllowed) {
  const Variant& v = GetParam();
  tisa::model::AlbertModel model(tiny_model(v));
  auto& attention = *model->encoder->groups[0]->layers[0]->attention;
  const auto* scheme = model->encoder->scheme_for(0, 0);
  const bool available = tisa::model::fused_attention_available();
  // kAuto on the CPU: a trainable bias stays eager while gradients are recorded, fused without them.
  const bool trainable_bias = scheme && !scheme->parameters().empty();
  // Pure logit biases and q/k transforms are fused; an output term (Shaw's aV) needs the eager path.
  const bool fused_expected = !(scheme && scheme->has_output_term());
  EXPECT_EQ(attention.uses_fused(scheme, /*probs_requested=*/false), available && fused_expected && !trainable_bias)
      << v.name;
  {
    torch::NoGradGuard no_grad;
    EXPECT_EQ(attention.uses_fused(scheme, false), available && fused_expected) << v.name << " without gradients";
  }
  tisa::model::set_attention_backend(*model, AttentionBackend::kFused);
  EXPECT_EQ(attention.uses_fused(scheme, false), available && fused_expected) << v.name << ": kFused";
  EXPECT_FALSE(attention.uses_fused(scheme, /*probs_requested=*/true)) << v.name << ": probabilities need eager";
  tisa::model::set_attention_backend(*model, AttentionBackend::kEager);
  EXPECT_FALSE(attention.uses_fused(scheme, false)) << v.name << ": kEager forces the eager path";
}

INSTANTIATE_TEST_SUITE_P(Schemes, FusedAttention, ::testing::ValuesIn(tisa::test::scheme_variants()),
                         [](const auto& info) { return tisa::test::variant_test_name(info.param); });

TEST(FusedAttentionMask, StaysFiniteInReducedPrecision) {
  auto mask = torch::tensor({0.0f, std::numeric_limits<float>::lowest()}).view({1, 1, 1, 2});
  for (auto dtype : {torch::kBFloat16, torch::kHalf}) {
    auto m = tisa::model::finite_mask_for(mask, dtype).to(dtype);
    EXPECT_TRUE(torch::isfinite(m).all().item<bool>()) << dtype;
    EXPECT_LT(m[0][0][0][1].item<double>(), -60000.0) << dtype;
  }
  EXPECT_TRUE(torch::equal(tisa::model::finite_mask_for(mask, torch::kFloat), mask));
}

}  // namespace
