// Shaw relative attention against a naive O(L²·d) reference that builds aK[clip(j−i)] and
// aV[clip(j−i)] as [L, L, d] tensors: forward and backward, random inputs, several k and L
// (L > k + 1 and L ≤ k), in float64 — for each of the two computations (gather and skew, see
// shaw.h) forced, and for the automatic choice.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "close.h"
#include "model/position/shaw.h"

namespace {

using tisa::test::close;

// Returns z [B, H, L, d] for one attention with Shaw's terms, both ways.
torch::Tensor ours(tisa::model::ShawImpl& s, const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  const double d = q.size(-1);
  auto logits = torch::matmul(q, k.transpose(-1, -2)) / std::sqrt(d);
  logits = s.add_to_logits(logits, q);
  auto probs = torch::softmax(logits, -1);
  return s.add_to_output(torch::matmul(probs, v), probs);
}

torch::Tensor naive(const torch::Tensor& aK, const torch::Tensor& aV, int64_t kmax, const torch::Tensor& q,
                    const torch::Tensor& k, const torch::Tensor& v) {
  const int64_t L = q.size(2);
  const double d = q.size(-1);
  std::vector<torch::Tensor> rowsK, rowsV;
  for (int64_t i = 0; i < L; ++i)
    for (int64_t j = 0; j < L; ++j) {
      const int64_t r = std::max(-kmax, std::min(kmax, j - i)) + kmax;
      rowsK.push_back(aK[r]);
      rowsV.push_back(aV[r]);
    }
  auto RK = torch::stack(rowsK).view({L, L, -1});  // [L, L, d]
  auto RV = torch::stack(rowsV).view({L, L, -1});  // [L, L, d]
  // e_ij = q_i·(k_j + RK_ij)/√d ; z_i = Σ_j α_ij (v_j + RV_ij)
  auto e = (torch::matmul(q, k.transpose(-1, -2)) + torch::einsum("bhid,ijd->bhij", {q, RK})) / std::sqrt(d);
  auto a = torch::softmax(e, -1);
  return torch::matmul(a, v) + torch::einsum("bhij,ijd->bhid", {a, RV});
}

class ShawVsNaive : public ::testing::TestWithParam<std::pair<int64_t, int64_t>> {};

TEST_P(ShawVsNaive, ForwardAndBackward) {
  const auto [kmax, L] = GetParam();
  using Strategy = tisa::model::ShawImpl::Strategy;
  for (Strategy strategy : {Strategy::kAuto, Strategy::kGather, Strategy::kSkew, Strategy::kNaive}) {
    SCOPED_TRACE(strategy == Strategy::kAuto ? "auto" : strategy == Strategy::kGather ? "gather"
                 : strategy == Strategy::kSkew ? "skew" : "naive");
    torch::manual_seed(10 * kmax + L);
    const int64_t B = 2, H = 3, d = 4;
    tisa::model::ShawImpl s(kmax, d, /*values=*/true, 0.5);
    s.to(torch::kDouble);
    s.set_strategy(strategy);
    auto opts = torch::TensorOptions().dtype(torch::kDouble).requires_grad(true);
    auto q = torch::randn({B, H, L, d}, opts), k = torch::randn({B, H, L, d}, opts), v = torch::randn({B, H, L, d}, opts);
    auto w = torch::randn({B, H, L, d}, torch::kDouble);  // random output weights for the backward

    auto z1 = ours(s, q, k, v);
    auto g1 = torch::autograd::grad({(z1 * w).sum()}, {q, k, v, s.keys_, s.values_});
    auto z2 = naive(s.keys_, s.values_, kmax, q, k, v);
    auto g2 = torch::autograd::grad({(z2 * w).sum()}, {q, k, v, s.keys_, s.values_});
    EXPECT_TRUE(close(z1, z2, 1e-10, 1e-10, "z"));
    const char* names[] = {"dq", "dk", "dv", "daK", "daV"};
    for (int i = 0; i < 5; ++i) EXPECT_TRUE(close(g1[i], g2[i], 1e-10, 1e-10, names[i]));
  }
}

INSTANTIATE_TEST_SUITE_P(KAndL, ShawVsNaive,
                         ::testing::Values(std::make_pair(2L, 7L), std::make_pair(1L, 10L), std::make_pair(3L, 5L),
                                           std::make_pair(3L, 4L), std::make_pair(3L, 3L), std::make_pair(16L, 5L),
                                           std::make_pair(0L, 4L), std::make_pair(5L, 1L),
                                           std::make_pair(5L, 8L), std::make_pair(1L, 2L), std::make_pair(7L, 8L)));

// The automatic choice: skew once the clip window 2w+1 covers the length, gather below it.
TEST(Shaw, ChoosesSkewForLongClipWindows) {
  tisa::model::ShawImpl s(16, 4, /*values=*/true, 0.1);
  EXPECT_FALSE(s.uses_skew(1));    // nothing to skew
  EXPECT_TRUE(s.uses_skew(17));    // w = 16: 33 ≥ 17
  EXPECT_TRUE(s.uses_skew(33));    // 33 ≥ 33
  EXPECT_FALSE(s.uses_skew(34));
  EXPECT_FALSE(s.uses_skew(512));  // the paper's k = 16 at 512 tokens: 33 offsets, gather
  tisa::model::ShawImpl hf(511, 4, /*values=*/false, 0.1);
  EXPECT_TRUE(hf.uses_skew(512));  // HF's relative_key setting: every offset reachable
}

TEST(Shaw, KeysOnlyLeavesOutputUnchanged) {
  tisa::model::ShawImpl s(2, 4, /*values=*/false, 0.1);
  EXPECT_FALSE(s.has_values());
  EXPECT_FALSE(s.has_output_term());  // a pure logit bias: the fused attention path takes it
  EXPECT_TRUE(tisa::model::ShawImpl(2, 4, /*values=*/true, 0.1).has_output_term());
  auto out = torch::randn({1, 2, 3, 4});
  EXPECT_TRUE(torch::equal(s.add_to_output(out, torch::rand({1, 2, 3, 3})), out));
  EXPECT_EQ(s.parameter_count(), 5 * 4);
}

}  // namespace
