// Tests of the translation-invariance measure τ and its inputs (SPEC §9): the Toeplitz projection
// against a plain loop over diagonals, τ = 1 for Toeplitz matrices, < 1 for random ones, invariance
// to an added constant, a hand-computed 2×2/3×3 case, the head term against a direct formula, and
// TISA's bias matrix (τ = 1 by construction; kernel values by hand).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "analysis/invariance.h"
#include "common/error.h"
#include "model/albert.h"
#include "model/position/tisa.h"

using namespace tisa::analysis;

namespace {
torch::Tensor random_toeplitz(int64_t n, torch::Generator gen) {
  auto diag = torch::randn({2 * n - 1}, gen, torch::kDouble);
  auto t = torch::empty({n, n}, torch::kDouble);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) t[i][j] = diag[j - i + n - 1];
  return t;
}
}  // namespace

TEST(InvarianceTest, ToeplitzProjectionMatchesLoopOverDiagonals) {
  auto gen = at::detail::createCPUGenerator(7);
  auto a = torch::randn({7, 7}, gen, torch::kFloat);
  auto t = toeplitz_projection(a);
  ASSERT_EQ(t.scalar_type(), torch::kDouble);
  auto a64 = a.to(torch::kDouble);
  for (int64_t r = -6; r <= 6; ++r) {
    double mean = torch::diagonal(a64, r).mean().item<double>();
    auto d = torch::diagonal(t, r);
    EXPECT_NEAR((d - mean).abs().max().item<double>(), 0.0, 1e-12) << "offset " << r;
  }
  auto means = diagonal_means(a);
  EXPECT_NEAR(means[0].item<double>(), a64[6][0].item<double>(), 1e-12);   // r = −6: only (6, 0)
  EXPECT_NEAR(means[12].item<double>(), a64[0][6].item<double>(), 1e-12);  // r = +6: only (0, 6)
  // Batched input: projection per matrix.
  auto batch = torch::stack({a, 2 * a});
  EXPECT_TRUE(torch::allclose(toeplitz_projection(batch)[1], 2 * t));
  // A projection: idempotent.
  EXPECT_TRUE(torch::allclose(toeplitz_projection(t), t, 1e-12, 1e-12));
}

TEST(InvarianceTest, TauIsOneForToeplitzAndBelowOneForRandom) {
  auto gen = at::detail::createCPUGenerator(11);
  for (int64_t n : {1, 2, 5, 33}) {
    auto t = random_toeplitz(n, gen);
    EXPECT_NEAR(translation_invariance(t), 1.0, 1e-12) << "n = " << n;
  }
  auto a = torch::randn({64, 64}, gen, torch::kDouble);
  double tau = translation_invariance(a);
  EXPECT_GT(tau, 0.0);
  EXPECT_LT(tau, 0.1) << "an i.i.d. matrix: diagonals explain ~(2n−1)/n² of the variance";
  // Constant matrices are Toeplitz (τ = 1 by our definition of 0/0).
  EXPECT_EQ(translation_invariance(torch::full({4, 4}, 0.1, torch::kDouble)), 1.0);
  EXPECT_EQ(translation_invariance(torch::zeros({3, 3})), 1.0);
  EXPECT_THROW(translation_invariance(torch::zeros({3, 4})), tisa::Error);
}

TEST(InvarianceTest, TauUnchangedByAddingAConstantAndByScaling) {
  auto gen = at::detail::createCPUGenerator(3);
  auto a = torch::randn({20, 20}, gen, torch::kDouble) + random_toeplitz(20, gen) * 3;
  double tau = translation_invariance(a);
  EXPECT_GT(tau, 0.5);
  EXPECT_LT(tau, 1.0);
  EXPECT_NEAR(translation_invariance(a + 17.5), tau, 1e-10);
  EXPECT_NEAR(translation_invariance(a * -4.0), tau, 1e-12);
  EXPECT_NEAR(translation_invariance(a.to(torch::kFloat)), tau, 1e-6) << "float input is analysed in float64";
}

TEST(InvarianceTest, HandComputedSmallCases) {
  // A = [[1, 2], [3, 4]]: diagonals r=−1 {3}, r=0 {1, 4} → mean 2.5, r=+1 {2}.
  // A − T(A) = [[−1.5, 0], [0, 1.5]] → 4.5;  mean(A) = 2.5 → ‖A − 2.5‖² = 2.25+0.25+0.25+2.25 = 5.
  // τ = 1 − 4.5 / 5 = 0.1.
  auto a = torch::tensor({1.0, 2.0, 3.0, 4.0}, torch::kDouble).view({2, 2});
  EXPECT_NEAR(translation_invariance(a), 0.1, 1e-15);
  // 3×3: A = [[0,1,0],[0,0,1],[1,0,0]] (a cyclic shift): diagonal r=+1 is {1,1} (mean 1), r=−2 is
  // {1}, the rest 0 → Toeplitz, τ = 1.  B = identity with B[2][2] = 4: r=0 {1,1,4} mean 2;
  // residual (−1)²+(−1)²+2² = 6; mean(B) = 6/9 → ‖B − 2/3‖² = 1+1+16 − 9·(2/3)² = 14; τ = 1 − 6/14.
  auto c = torch::tensor({0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0}, torch::kDouble).view({3, 3});
  EXPECT_NEAR(translation_invariance(c), 1.0, 1e-15);
  auto b = torch::eye(3, torch::kDouble);
  b[2][2] = 4.0;
  EXPECT_NEAR(translation_invariance(b), 1.0 - 6.0 / 14.0, 1e-14);
}

TEST(InvarianceTest, HeadTermMatchesDirectFormula) {
  auto gen = at::detail::createCPUGenerator(5);
  const int64_t P = 12, E = 4, H = 6, heads = 2, n = 9, d = H / heads;
  auto p = torch::randn({P, E}, gen, torch::kFloat);
  auto wm = torch::randn({H, E}, gen, torch::kFloat), bm = torch::randn({H}, gen, torch::kFloat);
  auto wq = torch::randn({H, H}, gen, torch::kFloat), bq = torch::randn({H}, gen, torch::kFloat);
  auto wk = torch::randn({H, H}, gen, torch::kFloat), bk = torch::randn({H}, gen, torch::kFloat);
  auto f = head_position_logits(p, wm, bm, wq, bq, wk, bk, heads, n);
  ASSERT_EQ(f.sizes(), (std::vector<int64_t>{heads, n, n}));
  // Element by element: F̂_h[i, j] = (q_i restricted to head h) · (k_j restricted to head h) / √d.
  auto m = p.to(torch::kDouble).narrow(0, 0, n).matmul(wm.to(torch::kDouble).t()) + bm.to(torch::kDouble);
  auto q = m.matmul(wq.to(torch::kDouble).t()) + bq.to(torch::kDouble);
  auto k = m.matmul(wk.to(torch::kDouble).t()) + bk.to(torch::kDouble);
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i : {0L, 4L, 8L})
      for (int64_t j : {0L, 3L, 8L}) {
        double expected = (q[i].narrow(0, h * d, d) * k[j].narrow(0, h * d, d)).sum().item<double>() / std::sqrt(3.0);
        EXPECT_NEAR(f[h][i][j].item<double>(), expected, 1e-9);
      }
  // Without a mapping (BERT-style), E must equal H.
  auto p2 = torch::randn({P, H}, gen, torch::kDouble);
  auto f2 = head_position_logits(p2, {}, {}, wq, {}, wk, {}, heads, n);
  auto q2 = p2.narrow(0, 0, n).matmul(wq.to(torch::kDouble).t());
  auto k2 = p2.narrow(0, 0, n).matmul(wk.to(torch::kDouble).t());
  EXPECT_NEAR(f2[1][2][5].item<double>(), (q2[2].narrow(0, d, d) * k2[5].narrow(0, d, d)).sum().item<double>() / std::sqrt(3.0), 1e-9);

  auto summary = position_invariance(p, wm, bm, wq, bq, wk, bk, heads, n);
  EXPECT_NEAR(summary.tau_gram, translation_invariance(position_gram(p, n)), 1e-15);
  ASSERT_EQ(summary.tau_heads.size(), 2u);
  EXPECT_NEAR(summary.tau_heads[1], translation_invariance(f[1]), 1e-15);
  EXPECT_NEAR(summary.tau_heads_mean, (summary.tau_heads[0] + summary.tau_heads[1]) / 2, 1e-15);
  EXPECT_THROW(position_invariance(p, wm, bm, wq, bq, wk, bk, heads, P + 1), tisa::Error);
  EXPECT_THROW(position_invariance(p, {}, {}, wq, bq, wk, bk, heads, n), tisa::Error) << "E != H without mapping";
  EXPECT_THROW(position_invariance(p, wm, bm, wq, bq, wk, bk, 4, n), tisa::Error) << "6 not divisible by 4";
}

TEST(InvarianceTest, SinusoidalPositionsGiveToeplitzGram) {
  // P[i] = (sin(ω i), cos(ω i)) pairs: P·Pᵀ[i, j] = Σ cos(ω (i − j)) is Toeplitz exactly.
  const int64_t n = 40;
  auto pos = torch::arange(n, torch::kDouble).unsqueeze(1);
  auto freq = torch::tensor({1.0, 0.3, 0.05}, torch::kDouble).unsqueeze(0);
  auto p = torch::cat({torch::sin(pos * freq), torch::cos(pos * freq)}, 1);  // [n, 6]
  EXPECT_NEAR(translation_invariance(position_gram(p, n)), 1.0, 1e-12);
  // Adding per-position noise breaks it.
  auto gen = at::detail::createCPUGenerator(1);
  EXPECT_LT(translation_invariance(position_gram(p + torch::randn({n, 6}, gen, torch::kDouble), n)), 0.9);
}

// The analysis asks a scheme for its term (offset_profile) and expands it as the model does
// (toeplitz_from_offsets): TISA's, by hand, and τ = 1 for its bias matrices.
TEST(InvarianceTest, TisaTermFromTheSchemeByHandAndBiasIsToeplitz) {
  torch::NoGradGuard no_grad;
  // One kernel, two heads, [S, H] layout: head 0: a = 2, b = −0.5 (|b| used), c = 1; head 1: a = 1, b = 1, c = −2.
  tisa::model::TisaImpl tisa(/*num_heads=*/2, /*num_kernels=*/1);
  tisa.to(torch::kDouble);
  tisa.offsets_.copy_(torch::tensor({1.0, -2.0}).view({1, 2}));
  tisa.amplitudes_.copy_(torch::tensor({2.0, 1.0}).view({1, 2}));
  tisa.sharpness_.copy_(torch::tensor({-0.5, 1.0}).view({1, 2}));
  auto f = tisa.offset_profile(4);  // [2, 7], index r + 3
  ASSERT_EQ(f.sizes(), (std::vector<int64_t>{2, 7}));
  ASSERT_EQ(f.scalar_type(), torch::kDouble);
  EXPECT_NEAR(f[0][2].item<double>(), 2 * std::exp(-0.5 * 4), 1e-15);  // r = −1: (−1 − 1)² = 4
  EXPECT_NEAR(f[0][6].item<double>(), 2 * std::exp(-0.5 * 4), 1e-15);  // r = 3: (3 − 1)² = 4
  EXPECT_NEAR(f[1][3].item<double>(), std::exp(-4.0), 1e-15);          // r = 0: (0 + 2)² = 4
  // 3×3 bias of head 0: B[i, j] = f_0(j − i); B[0, 2] = f(2) = 2·e^{−0.5}, B[2, 0] = f(−2) = 2·e^{−4.5}.
  auto bias = tisa::model::toeplitz_from_offsets(tisa.offset_profile(3), 3);
  ASSERT_EQ(bias.sizes(), (std::vector<int64_t>{2, 3, 3}));
  EXPECT_NEAR(bias[0][0][2].item<double>(), 2 * std::exp(-0.5), 1e-15);
  EXPECT_NEAR(bias[0][2][0].item<double>(), 2 * std::exp(-4.5), 1e-15);
  EXPECT_NEAR(bias[0][1][1].item<double>(), 2 * std::exp(-0.5), 1e-15);  // r = 0: (0 − 1)² = 1
  // Random kernels, longer sequence: τ = 1 for every head.
  tisa::model::TisaImpl big(/*num_heads=*/4, /*num_kernels=*/5);
  big.to(torch::kDouble);
  auto matrices = tisa::model::toeplitz_from_offsets(big.offset_profile(64), 64);
  for (int64_t h = 0; h < 4; ++h) EXPECT_DOUBLE_EQ(translation_invariance(matrices[h]), 1.0) << "head " << h;
}

TEST(InvarianceTest, ModelHookFindsAlbertParameters) {
  tisa::config::ModelConfig c;
  c.vocab_size = 50;
  c.embedding_size = 8;
  c.hidden_size = 12;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 3;
  c.intermediate_size = 16;
  c.max_position_embeddings = 20;
  torch::manual_seed(0);
  tisa::model::AlbertForPreTraining model(c);
  auto tau = model_position_invariance(*model, 3, 16);
  ASSERT_TRUE(tau.has_value());
  auto params = model->named_parameters();
  const std::string layer = "albert.encoder.albert_layer_groups.0.albert_layers.0.attention.";
  auto direct = position_invariance(params["albert.embeddings.position_embeddings.weight"],
                                    params["albert.encoder.embedding_hidden_mapping_in.weight"],
                                    params["albert.encoder.embedding_hidden_mapping_in.bias"],
                                    params[layer + "query.weight"], params[layer + "query.bias"],
                                    params[layer + "key.weight"], params[layer + "key.bias"], 3, 16);
  EXPECT_DOUBLE_EQ(tau->tau_gram, direct.tau_gram);
  ASSERT_EQ(tau->tau_heads.size(), 3u);
  EXPECT_DOUBLE_EQ(tau->tau_heads_mean, direct.tau_heads_mean);
  auto j = to_json(*tau);
  EXPECT_EQ(j.at("tau_heads").size(), 3u);
  // The hook must not touch autograd state.
  EXPECT_FALSE(params["albert.embeddings.position_embeddings.weight"].grad().defined());
  // Larger n than the table: clipped to the table.
  EXPECT_NO_THROW(model_position_invariance(*model, 3, 1000));
  c.position.absolute = false;
  c.position.relative = "tisa";
  tisa::model::AlbertForPreTraining tisa_only(c);
  EXPECT_FALSE(model_position_invariance(*tisa_only, 3, 16).has_value());
}
