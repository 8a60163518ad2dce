// TISA bias against the official code (golden/tisa/): our module with c_ours = −1 − c_official must
// reproduce the official [H, L, L] output within close(1e-6, 1e-5), and f_paper(r) likewise; the
// hand-computed 3×3 example pins the convention f(j − i) (SPEC §2).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "close.h"
#include "common/fs.h"
#include "model/position/tisa.h"
#include "model/tensor_io.h"
#include "support/test_paths.h"

namespace {

using tisa::test::close;

tisa::model::Tisa from_official(const tisa::model::TensorMap& t) {
  const auto c = t.at("kernel_offsets");  // [S, H]
  tisa::model::Tisa m(c.size(1), c.size(0));
  torch::NoGradGuard g;
  m->offsets_.copy_(-1.0 - c);
  m->amplitudes_.copy_(t.at("kernel_amplitudes"));
  m->sharpness_.copy_(t.at("kernel_sharpness"));
  return m;
}

TEST(TisaGolden, OfficialOutputsAfterOffsetConversion) {
  TISA_REQUIRE_SHARED("golden/tisa/cases.json");
  const auto cases = nlohmann::json::parse(tisa::fs::read_file(tisa::test::shared_path("golden/tisa/cases.json")));
  int n = 0;
  for (auto it = cases["cases"].begin(); it != cases["cases"].end(); ++it, ++n) {
    const auto& c = it.value();
    const auto t = tisa::model::load_tensor_file(tisa::test::shared_path("golden/tisa/" + c["file"].get<std::string>())).tensors;
    const int64_t L = c["seq_len"].get<int64_t>();
    auto m = from_official(t);
    EXPECT_TRUE(close(m->offsets_, t.at("kernel_offsets_paper"), 0, 0, it.key() + " c_paper"));
    EXPECT_TRUE(close(m->bias(L), t.at("output"), 1e-6, 1e-5, it.key() + " output"));
    EXPECT_TRUE(close(m->scores(L), t.at("f_paper"), 1e-6, 1e-5, it.key() + " f_paper"));
    // Unconverted offsets must NOT match (the convention matters).
    torch::NoGradGuard g;
    m->offsets_.copy_(t.at("kernel_offsets"));
    EXPECT_FALSE(close(m->bias(L), t.at("output"), 1e-6, 1e-5, "unconverted"));
  }
  EXPECT_EQ(n, 4);
}

TEST(TisaManual, HandComputed3x3) {
  // S = 2, H = 2 (rows kernels, columns heads); official offsets c, ours −1 − c.
  const double c[2][2] = {{0, -2}, {1.5, 0.5}}, a[2][2] = {{1, 0.5}, {-0.25, 2}}, b[2][2] = {{1, -0.5}, {0.1, 2}};
  tisa::model::Tisa m(2, 2);
  {
    torch::NoGradGuard g;
    for (int s = 0; s < 2; ++s)
      for (int h = 0; h < 2; ++h) {
        m->offsets_[s][h] = -1.0 - c[s][h];
        m->amplitudes_[s][h] = a[s][h];
        m->sharpness_[s][h] = b[s][h];
      }
  }
  auto bias = m->bias(3);  // [H, 3, 3]
  // By hand: bias[0, 0, 0] = f_0(0) with paper offsets: e^(−1·(0 − (−1))²) − 0.25·e^(−0.1·(0 − (−2.5))²)
  //        = e^(−1) − 0.25·e^(−0.625) = 0.2340641 (golden README: official output[0,0,0]).
  EXPECT_NEAR(bias[0][0][0].item<double>(), std::exp(-1.0) - 0.25 * std::exp(-0.625), 1e-6);
  EXPECT_NEAR(bias[0][0][0].item<double>(), 0.2340641, 1e-6);
  // Every entry: bias[h, i, j] = f_h(j − i) = Σ_s a exp(−|b| (j − i − c_paper)²).
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        double f = 0;
        for (int s = 0; s < 2; ++s) {
          const double r = j - i - (-1.0 - c[s][h]);
          f += a[s][h] * std::exp(-std::abs(b[s][h]) * r * r);
        }
        EXPECT_NEAR(bias[h][i][j].item<double>(), f, 1e-6) << h << " " << i << " " << j;
      }
  // Toeplitz: constant along diagonals, and i = 1, j = 0 (offset −1) differs from i = 0, j = 1.
  EXPECT_FLOAT_EQ(bias[1][1][0].item<float>(), bias[1][2][1].item<float>());
  EXPECT_NEAR(bias[0][1][0].item<double>(), 0.8003709, 1e-6);  // golden manual output[0][1][0]
  if (tisa::test::file_exists(tisa::test::shared_path("golden/tisa/cases.json"))) {
    const auto cases = nlohmann::json::parse(tisa::fs::read_file(tisa::test::shared_path("golden/tisa/cases.json")));
    const auto& out = cases["cases"]["manual_h2_s2_l3"]["output"];
    for (int h = 0; h < 2; ++h)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) EXPECT_NEAR(bias[h][i][j].item<double>(), out[h][i][j].get<double>(), 1e-6);
  }
}

TEST(Tisa, InitialisationFollowsSpec) {
  torch::manual_seed(3);
  tisa::model::Tisa m(64, 64);  // 4096 draws per parameter
  EXPECT_NEAR(m->offsets_.mean().item<double>(), 0.0, 0.3);
  EXPECT_NEAR(m->offsets_.std().item<double>(), 5.0, 0.2);
  EXPECT_NEAR(m->amplitudes_.mean().item<double>(), 0.1, 0.001);
  EXPECT_NEAR(m->amplitudes_.std().item<double>(), 0.01, 0.001);
  EXPECT_NEAR(m->sharpness_.mean().item<double>(), 0.1, 0.001);
  EXPECT_NEAR(m->sharpness_.std().item<double>(), 0.01, 0.001);
}

TEST(Tisa, BiasIsBroadcastOverTheBatchAndBackpropagates) {
  torch::manual_seed(1);
  tisa::model::Tisa m(3, 2);
  auto q = torch::randn({4, 3, 5, 8});
  auto logits = torch::zeros({4, 3, 5, 5});
  m->begin_forward(5);
  auto out = m->add_to_logits(logits, q);
  ASSERT_EQ(out.sizes(), logits.sizes());
  EXPECT_TRUE(torch::equal(out[0], out[3]));
  out.sum().backward();
  EXPECT_TRUE(m->offsets_.grad().defined());
  EXPECT_GT(m->amplitudes_.grad().abs().sum().item<double>(), 0);
}

// The Toeplitz expansion (unfold + flip) must equal the element-wise definition
// bias[h, i, j] = f_h(j − i), forward and backward (gradients reach a, b and c).
TEST(Tisa, BiasExpansionMatchesElementwiseDefinitionWithGradients) {
  torch::manual_seed(7);
  const int64_t H = 3, S = 2, L = 9;
  tisa::model::Tisa m(H, S);
  auto weights = torch::randn({H, L, L});
  auto fast = m->bias(L);
  (fast * weights).sum().backward();
  auto g_fast = std::vector<torch::Tensor>{m->offsets_.grad().clone(), m->amplitudes_.grad().clone(),
                                           m->sharpness_.grad().clone()};
  for (auto& p : m->parameters()) p.mutable_grad().zero_();
  auto f = m->scores(L);  // [H, 2L−1], f[h, r + L − 1] = f_h(r)
  std::vector<torch::Tensor> rows;
  for (int64_t i = 0; i < L; ++i)
    for (int64_t j = 0; j < L; ++j) rows.push_back(f.select(1, j - i + L - 1));
  auto slow = torch::stack(rows, 1).view({H, L, L});
  ASSERT_TRUE(torch::allclose(fast, slow, 0, 0)) << "bias differs from f(j − i)";
  (slow * weights).sum().backward();
  EXPECT_TRUE(torch::allclose(g_fast[0], m->offsets_.grad(), 1e-6, 1e-5));
  EXPECT_TRUE(torch::allclose(g_fast[1], m->amplitudes_.grad(), 1e-6, 1e-5));
  EXPECT_TRUE(torch::allclose(g_fast[2], m->sharpness_.grad(), 1e-6, 1e-5));
}

}  // namespace
