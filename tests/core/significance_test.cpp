// Confidence intervals, paired bootstrap, approximate randomisation and Holm's correction
// (metrics/significance.h): hand-computed values, the normal approximation the bootstrap and the
// exact sign test the randomisation must agree with, the smoothed p-values' floor, and properties
// (determinism, antisymmetry, degenerate samples).
#include <gtest/gtest.h>

#include <cmath>

#include "common/error.h"
#include "metrics/glue_metrics.h"
#include "metrics/significance.h"

namespace m = tisa::metrics;

namespace {

double accuracy_of(const std::vector<double>& p, const std::vector<double>& l) {
  size_t hit = 0;
  for (size_t i = 0; i < p.size(); ++i) hit += p[i] == l[i];
  return static_cast<double>(hit) / static_cast<double>(p.size());
}

// n examples, all label 1; a is right on `a_only` + `both`, b on `b_only` + `both`.
struct Pair {
  std::vector<double> labels, a, b;
};
Pair make_pair_case(size_t n, size_t a_only, size_t b_only, size_t both) {
  Pair p;
  p.labels.assign(n, 1);
  p.a.assign(n, 0);
  p.b.assign(n, 0);
  size_t i = 0;
  for (size_t k = 0; k < a_only; ++k) p.a[i++] = 1;
  for (size_t k = 0; k < b_only; ++k) p.b[i++] = 1;
  for (size_t k = 0; k < both; ++k) p.a[i] = p.b[i] = 1, ++i;
  return p;
}

}  // namespace

TEST(StudentT, TableAndExpansion) {
  EXPECT_DOUBLE_EQ(m::student_t_975(1), 12.706);
  EXPECT_DOUBLE_EQ(m::student_t_975(2), 4.303);
  EXPECT_DOUBLE_EQ(m::student_t_975(30), 2.042);
  EXPECT_NEAR(m::student_t_975(31), 2.0395, 1e-3);   // SciPy: t.ppf(0.975, 31) = 2.03951
  EXPECT_NEAR(m::student_t_975(60), 2.0003, 1e-3);   // 2.00030
  EXPECT_NEAR(m::student_t_975(1000), 1.9623, 1e-3); // 1.96234
  EXPECT_THROW(m::student_t_975(0), tisa::Error);
}

TEST(MeanInterval, HandComputed) {
  const auto s = m::mean_interval_95({1, 2, 3});
  EXPECT_EQ(s.n, 3u);
  EXPECT_DOUBLE_EQ(s.mean, 2);
  EXPECT_DOUBLE_EQ(s.std, 1);
  EXPECT_NEAR(s.half_width, 4.303 / std::sqrt(3.0), 1e-12);
  EXPECT_NEAR(s.low(), 2 - 2.48434, 1e-5);
  const auto one = m::mean_interval_95({0.7});
  EXPECT_DOUBLE_EQ(one.mean, 0.7);
  EXPECT_TRUE(std::isnan(one.half_width));
  EXPECT_THROW(m::mean_interval_95({}), tisa::Error);
  EXPECT_THROW(m::mean_interval_95({1, std::nan("")}), tisa::Error);
}

TEST(Holm, HandComputed) {
  const auto adj = m::holm_adjust({0.01, 0.04, 0.03});
  ASSERT_EQ(adj.size(), 3u);
  EXPECT_NEAR(adj[0], 0.03, 1e-15);  // 3 × 0.01
  EXPECT_NEAR(adj[2], 0.06, 1e-15);  // 2 × 0.03
  EXPECT_NEAR(adj[1], 0.06, 1e-15);  // max(1 × 0.04, 0.06): monotone
  EXPECT_EQ(m::holm_adjust({0.5, 0.9})[1], 1.0);  // capped at 1
  EXPECT_THROW(m::holm_adjust({0.1, 1.5}), tisa::Error);
}

TEST(PairedBootstrap, IdenticalPredictionsHaveNoDifference) {
  const auto p = make_pair_case(200, 0, 0, 120);
  const auto r = m::paired_bootstrap(accuracy_of, {p.a, p.a}, {p.b, p.b}, p.labels, 500);
  EXPECT_EQ(r.difference, 0);
  EXPECT_EQ(r.low, 0);
  EXPECT_EQ(r.high, 0);
  EXPECT_EQ(r.p_value, 1);
  EXPECT_EQ(r.resamples, 500);
  EXPECT_EQ(r.seeds, 2u);
}

// b right on 80 examples where a is wrong, a on 40 where b is wrong, of 1,000: the difference
// of accuracies is 0.04 with standard error √((80+40)/n² − 0.04²/n) = 0.01088, so the 95 %
// interval is about [0.0187, 0.0613] and the two-sided p about 2·Φ(−3.68) = 2.4e-4.
TEST(PairedBootstrap, AgreesWithTheNormalApproximation) {
  const auto p = make_pair_case(1000, 40, 80, 600);
  const auto r = m::paired_bootstrap(accuracy_of, {p.a}, {p.b}, p.labels, 4000, 7);
  EXPECT_NEAR(r.difference, 0.04, 1e-12);
  EXPECT_NEAR(r.low, 0.0187, 0.003);
  EXPECT_NEAR(r.high, 0.0613, 0.003);
  EXPECT_LT(r.p_value, 0.005);
  EXPECT_EQ(r.dropped, 0);
}

TEST(PairedBootstrap, DeterministicAndAntisymmetric) {
  const auto p = make_pair_case(300, 30, 40, 150);
  const auto r1 = m::paired_bootstrap(accuracy_of, {p.a}, {p.b}, p.labels, 1000, 11);
  const auto r2 = m::paired_bootstrap(accuracy_of, {p.a}, {p.b}, p.labels, 1000, 11);
  EXPECT_EQ(r1.low, r2.low);
  EXPECT_EQ(r1.high, r2.high);
  EXPECT_EQ(r1.p_value, r2.p_value);
  const auto swapped = m::paired_bootstrap(accuracy_of, {p.b}, {p.a}, p.labels, 1000, 11);
  EXPECT_NEAR(swapped.difference, -r1.difference, 1e-15);
  EXPECT_NEAR(swapped.low, -r1.high, 1e-12);
  EXPECT_NEAR(swapped.high, -r1.low, 1e-12);
  EXPECT_NEAR(swapped.p_value, r1.p_value, 1e-12);
  // A difference of 10 examples in 300 with 70 disagreements is not significant.
  EXPECT_GT(r1.p_value, 0.05);
  EXPECT_LT(r1.low, 0);
  EXPECT_GT(r1.high, 0);
}

// b is right on 200 examples where a is wrong and never the other way: every resample favours b,
// and the p-value is the smallest the resamples can resolve, 2/(B + 1), not 0.
TEST(PairedBootstrap, PValueIsSmoothedNeverZero) {
  const auto p = make_pair_case(1000, 0, 200, 600);
  const auto r = m::paired_bootstrap(accuracy_of, {p.a}, {p.b}, p.labels, 999, 5);
  EXPECT_EQ(r.resamples, 999);
  EXPECT_DOUBLE_EQ(r.p_value, 2.0 / 1000.0);
  EXPECT_DOUBLE_EQ(m::smallest_bootstrap_p(999), 2.0 / 1000.0);
  EXPECT_GT(r.p_value, 0);
}

// Two-sided exact sign test on `discordant` pairs of which `b_wins` favour b: what approximate
// randomisation estimates for accuracy (swapping a concordant pair changes nothing).
double exact_sign_test(int n, int b_wins) {
  const int k = std::min(b_wins, n - b_wins);
  double tail = 0;
  for (int i = 0; i <= k; ++i)
    tail += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) - n * std::log(2.0));
  return std::min(1.0, 2 * tail);
}

// 70 discordant examples, 40 for b and 30 for a: the exact sign test gives p = 0.282; 10,000
// trials estimate it within a few Monte Carlo standard errors (√(p(1 − p)/R) = 0.0045).
TEST(ApproximateRandomisation, AgreesWithTheExactSignTest) {
  const auto p = make_pair_case(300, 30, 40, 150);
  const auto r = m::approximate_randomisation(accuracy_of, {p.a}, {p.b}, p.labels, 10000, 13);
  const double exact = exact_sign_test(70, 40);
  EXPECT_NEAR(exact, 0.282, 0.0005);
  EXPECT_NEAR(r.p_value, exact, 0.015);
  EXPECT_NEAR(r.difference, 10.0 / 300.0, 1e-12);
  EXPECT_EQ(r.trials, 10000);
  // A clear difference reaches the floor (k + 1)/(R + 1), never 0.
  const auto clear = make_pair_case(1000, 0, 200, 600);
  const auto c = m::approximate_randomisation(accuracy_of, {clear.a}, {clear.b}, clear.labels, 999, 13);
  EXPECT_DOUBLE_EQ(c.p_value, 1.0 / 1000.0);
}

TEST(ApproximateRandomisation, IdenticalPredictionsDeterministicAndSymmetric) {
  const auto same = make_pair_case(200, 0, 0, 120);
  EXPECT_EQ(m::approximate_randomisation(accuracy_of, {same.a, same.a}, {same.b, same.b}, same.labels, 500).p_value, 1);
  const auto p = make_pair_case(300, 30, 40, 150);
  const auto r1 = m::approximate_randomisation(accuracy_of, {p.a, p.b}, {p.b, p.a}, p.labels, 800, 3);
  const auto r2 = m::approximate_randomisation(accuracy_of, {p.a, p.b}, {p.b, p.a}, p.labels, 800, 3);
  EXPECT_EQ(r1.p_value, r2.p_value);
  const auto a1 = m::approximate_randomisation(accuracy_of, {p.a}, {p.b}, p.labels, 800, 3);
  const auto swapped = m::approximate_randomisation(accuracy_of, {p.b}, {p.a}, p.labels, 800, 3);
  EXPECT_EQ(swapped.p_value, a1.p_value);
  EXPECT_NEAR(swapped.difference, -a1.difference, 1e-15);
  EXPECT_THROW(m::approximate_randomisation(accuracy_of, {{1, 0}}, {{1}}, {1, 0}), tisa::Error);
}

// The pretraining draw in the interval: two draws on which b − a is +0.10 and −0.02 (accuracy on
// 1,000 examples, one seed each) average +0.04 like a single draw at +0.04, but the nested
// bootstrap, resampling the draws, sees their disagreement: its interval is much wider than the
// paired bootstrap's over the same seeds with the draws fixed, and reaches below +0.01.
TEST(NestedPairedBootstrap, IncludesThePretrainingDraw) {
  const auto up = make_pair_case(1000, 20, 120, 600);     // b − a = +0.10
  const auto down = make_pair_case(1000, 60, 40, 600);    // b − a = −0.02
  const m::DrawPredictions a = {{up.a}, {down.a}}, b = {{up.b}, {down.b}};
  const auto nested = m::nested_paired_bootstrap(accuracy_of, a, b, up.labels, 4000, 9);
  const auto fixed = m::paired_bootstrap(accuracy_of, {up.a, down.a}, {up.b, down.b}, up.labels, 4000, 9);
  EXPECT_NEAR(nested.difference, 0.04, 1e-12);
  EXPECT_NEAR(fixed.difference, 0.04, 1e-12);
  EXPECT_EQ(nested.seeds, 2u);
  EXPECT_GT(nested.high - nested.low, 3 * (fixed.high - fixed.low));
  EXPECT_LT(nested.low, 0.01);
  EXPECT_GT(fixed.low, 0.01);
  // Identical draws behave like one: the interval is that of the paired bootstrap, up to resampling.
  const m::DrawPredictions a2 = {{up.a}, {up.a}}, b2 = {{up.b}, {up.b}};
  const auto same = m::nested_paired_bootstrap(accuracy_of, a2, b2, up.labels, 4000, 9);
  const auto one = m::paired_bootstrap(accuracy_of, {up.a}, {up.b}, up.labels, 4000, 9);
  EXPECT_NEAR(same.high - same.low, one.high - one.low, 0.006);
  EXPECT_DOUBLE_EQ(same.p_value, 2.0 / 4001.0);  // every resample favours b: the floor, not 0
}

TEST(NestedPairedBootstrap, DeterministicAndChecked) {
  const auto p = make_pair_case(300, 30, 40, 150);
  const m::DrawPredictions a = {{p.a, p.b}, {p.b, p.a}}, b = {{p.b, p.a}, {p.a, p.b}};
  const auto r1 = m::nested_paired_bootstrap(accuracy_of, a, b, p.labels, 500, 4);
  const auto r2 = m::nested_paired_bootstrap(accuracy_of, a, b, p.labels, 500, 4);
  EXPECT_EQ(r1.low, r2.low);
  EXPECT_EQ(r1.p_value, r2.p_value);
  EXPECT_NEAR(r1.difference, 0, 1e-15);
  EXPECT_THROW(m::nested_paired_bootstrap(accuracy_of, a, {{p.b, p.a}}, p.labels), tisa::Error);
  EXPECT_THROW(m::nested_paired_bootstrap(accuracy_of, a, {{p.b, p.a}, {p.a}}, p.labels), tisa::Error);
  EXPECT_THROW(m::nested_paired_bootstrap(accuracy_of, {{}}, {{}}, p.labels), tisa::Error);
}

// Correlations of constant resamples are NaN; those resamples are dropped and counted.
TEST(PairedBootstrap, DegenerateResamplesAreDroppedAndCounted) {
  const std::vector<double> labels = {0, 1, 2, 3};
  const std::vector<double> a = {0, 1, 2, 3}, b = {0, 1, 3, 2};
  auto pearson = [](const std::vector<double>& p, const std::vector<double>& l) { return m::pearson(p, l); };
  const auto r = m::paired_bootstrap(pearson, {a}, {b}, labels, 400, 3);
  EXPECT_GT(r.dropped, 0);  // all four draws equal: P = 4 · (1/4)^4 per resample
  EXPECT_EQ(r.resamples + r.dropped, 400);
  EXPECT_LT(r.difference, 0);
}

TEST(PairedBootstrap, RejectsMismatchedInputs) {
  const std::vector<double> labels = {1, 0};
  EXPECT_THROW(m::paired_bootstrap(accuracy_of, {{1, 0}}, {}, labels), tisa::Error);
  EXPECT_THROW(m::paired_bootstrap(accuracy_of, {{1, 0}}, {{1}}, labels), tisa::Error);
  EXPECT_THROW(m::paired_bootstrap(accuracy_of, {{1, 0}}, {{1, 0}}, labels, 10), tisa::Error);
}
