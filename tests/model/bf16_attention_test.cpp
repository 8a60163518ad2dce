// The eager attention under bf16 autocast stays in the matrix products' dtype: every scheme's
// logit bias and the padding mask are added in bf16 and the softmax runs on bf16 logits (no
// float32 [B, H, L, L] copies and casts), with values and gradients that still match float32
// within bf16's precision.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include "close.h"
#include "model/albert.h"
#include "model/autocast.h"
#include "scheme_variants.h"

namespace {

using tisa::test::close;
using tisa::test::SchemeVariant;

class Bf16Attention : public ::testing::TestWithParam<SchemeVariant> {};

struct AttentionRun {
  torch::Tensor out, probs, grad_x;
  std::map<std::string, torch::Tensor> grads;
};

// One eager attention layer (with its scheme's term) on a padded batch, forward and backward.
AttentionRun run_attention(tisa::model::AlbertModel& m, bool bf16) {
  m->zero_grad();
  torch::manual_seed(11);
  auto x = torch::randn({3, 11, 16}).requires_grad_(true);
  auto additive_mask = torch::zeros({3, 1, 1, 11});
  additive_mask[1].narrow(-1, 7, 4).fill_(std::numeric_limits<float>::lowest());
  additive_mask[2].narrow(-1, 2, 9).fill_(std::numeric_limits<float>::lowest());
  auto* scheme = m->encoder->scheme_for(0, 0);
  if (scheme) scheme->begin_forward(11);
  auto& attention = m->encoder->groups[0]->layers[0]->attention;
  AttentionRun r;
  {
    tisa::model::AutocastScope autocast(torch::kCPU, bf16);
    r.out = attention->forward(x, additive_mask, scheme, &r.probs);
  }
  auto w = torch::linspace(-1, 1, r.out.numel()).view(r.out.sizes());
  (r.out.to(torch::kFloat) * w).sum().backward();
  r.grad_x = x.grad().clone();
  for (const auto& p : attention->named_parameters())
    if (p.value().grad().defined()) r.grads["attention." + p.key()] = p.value().grad().clone();
  if (scheme)
    for (const auto& p : scheme->named_parameters())
      if (p.value().grad().defined()) r.grads["scheme." + p.key()] = p.value().grad().clone();
  return r;
}

TEST_P(Bf16Attention, LogitsMaskAndSoftmaxStayInBf16AndMatchFloat32) {
  const SchemeVariant& v = GetParam();
  torch::manual_seed(5);
  tisa::model::AlbertModel m(tisa::test::tiny_model(v));
  m->train();  // dropout is 0 in the tiny config; gradients are recorded
  const AttentionRun ref = run_attention(m, false);
  const AttentionRun got = run_attention(m, true);
  ASSERT_EQ(ref.probs.scalar_type(), torch::kFloat);
  // Before: the float32 mask (and any float32 scheme bias) promoted the logits to float32.
  EXPECT_EQ(got.probs.scalar_type(), torch::kBFloat16) << v.name;
  EXPECT_TRUE(close(got.probs.to(torch::kFloat), ref.probs, 0.02, 0.05, v.name + " probabilities"));
  EXPECT_TRUE(close(got.out.to(torch::kFloat), ref.out, 0.05, 0.05, v.name + " output"));
  // Padding keys get no probability in bf16 either (the mask stays finite and large).
  EXPECT_EQ(got.probs[2].narrow(-1, 2, 9).to(torch::kFloat).abs().max().item<float>(), 0.0f) << v.name;
  const double scale_x = ref.grad_x.abs().max().item<double>();
  EXPECT_TRUE(close(got.grad_x, ref.grad_x, 0.05 * scale_x, 0.05, v.name + " dL/dx"));
  ASSERT_EQ(got.grads.size(), ref.grads.size()) << v.name;
  // Per tensor against its own largest entry, with a floor from the largest gradient of any
  // tensor: some gradients are zero up to rounding (FIRE's output bias shifts whole softmax rows).
  double largest = 0.0;
  for (const auto& [name, g] : ref.grads) largest = std::max(largest, g.abs().max().item<double>());
  for (const auto& [name, g] : ref.grads) {
    const double scale = g.abs().max().item<double>();
    EXPECT_TRUE(close(got.grads.at(name), g, 0.05 * scale + 1e-3 * largest, 0.05, v.name + " gradient of " + name));
  }
}

INSTANTIATE_TEST_SUITE_P(AllSchemes, Bf16Attention, ::testing::ValuesIn(tisa::test::scheme_variants()),
                         [](const ::testing::TestParamInfo<SchemeVariant>& i) { return tisa::test::variant_test_name(i.param); });

TEST(Bf16Attention, AutocastDtypeIsReportedOnlyInsideTheScope) {
  EXPECT_FALSE(tisa::model::autocast_dtype(torch::kCPU).has_value());
  {
    tisa::model::AutocastScope autocast(torch::kCPU, true);
    ASSERT_TRUE(tisa::model::autocast_dtype(torch::kCPU).has_value());
    EXPECT_EQ(*tisa::model::autocast_dtype(torch::kCPU), torch::kBFloat16);
  }
  EXPECT_FALSE(tisa::model::autocast_dtype(torch::kCPU).has_value());
}

}  // namespace
