// Statistics for comparing training variants (issue 17): a confidence interval of a mean over
// seeds, a paired bootstrap over evaluation examples, and Holm's correction for testing many
// comparisons at once. Torch-free.
//
// Why these: three seeds are what a CPU-scale study affords, so the interval over seeds uses
// Student's t (with n = 3 it is ±4.30 standard errors — wide, and honest about it). Seeds alone
// cannot say whether two variants differ on a 277-example dev set, so the paired bootstrap
// resamples the dev examples (the same resample for both variants and every seed; the seeds are
// paired by having the same fine-tuning data order) and asks how often the difference of the
// seed-averaged metric changes sign (Koehn 2004; Dror et al. 2018). Ten variants × six tasks are
// sixty tests, so p-values are Holm-adjusted before anything is called significant.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

namespace tisa::metrics {

// Two-sided 95 % quantile of Student's t with `df` degrees of freedom (df ≥ 1): exact table values
// to 3 decimals for df ≤ 30, an asymptotic expansion beyond (error < 1e-3).
double student_t_975(int64_t df);

struct MeanInterval {
  size_t n = 0;
  double mean = 0;
  double std = 0;          // sample standard deviation (n − 1); 0 when n = 1
  double half_width = 0;   // t(0.975, n−1) · std / √n; NaN when n = 1 (no interval from one value)
  double low() const { return mean - half_width; }
  double high() const { return mean + half_width; }
};

// Mean of `values` with its 95 % confidence interval (Student's t). Throws tisa::Error when empty
// or when a value is not finite.
MeanInterval mean_interval_95(const std::vector<double>& values);

// A metric of predictions against labels (e.g. accuracy, MCC, Pearson); may return NaN for a
// degenerate sample (a constant prediction's correlation).
using MetricFn = std::function<double(const std::vector<double>& predictions, const std::vector<double>& labels)>;

struct PairedBootstrapResult {
  double difference = 0;   // mean over seeds of metric(b) − metric(a) on the full evaluation set
  double low = 0;          // 2.5 % percentile of the resampled differences
  double high = 0;         // 97.5 % percentile
  // Two-sided, smoothed so that it is never 0: min(1, 2·(min(#d ≤ 0, #d ≥ 0) + 1) / (B + 1)) over
  // the B finite resamples (Davison & Hinkley 1997, §4.2). The smallest attainable value is
  // 2 / (B + 1) (smallest_p_value).
  double p_value = 1;
  int64_t resamples = 0;   // resamples with a finite difference (degenerate ones are dropped)
  int64_t dropped = 0;     // resamples whose metric was not finite
  size_t seeds = 0;
  size_t examples = 0;
};

// Paired bootstrap of b against a. `a[s]` and `b[s]` are the predictions of seed s for every
// example (same order as `labels`). Each resample draws examples with replacement (the same draw
// for every seed and both variants) from a generator seeded with `rng_seed`, so the result is
// reproducible. Throws tisa::Error on size mismatches, no seeds, or resamples < 100.
PairedBootstrapResult paired_bootstrap(const MetricFn& metric, const std::vector<std::vector<double>>& a,
                                       const std::vector<std::vector<double>>& b, const std::vector<double>& labels,
                                       int64_t resamples = 10000, uint64_t rng_seed = 20210801);

// Predictions of one variant: [pretraining draw][fine-tuning seed][example].
using DrawPredictions = std::vector<std::vector<std::vector<double>>>;

// Paired bootstrap that includes the pretraining draw (issue 31): every resample draws, with
// replacement, pretraining draws (draw k of a paired with draw k of b: the same pretraining
// seed), then within each drawn pretraining its fine-tuning seeds (seed s of a with seed s of
// b), then the dev examples (one draw for everything), and takes the mean of metric(b) −
// metric(a) over the drawn (draw, seed) pairs. `difference` is that mean on the full data. With
// one draw and resampled seeds it is wider than paired_bootstrap, which keeps the seeds fixed.
// Same p-value rule (smoothed), result type and generator discipline; every draw must have at
// least one seed, and a and b the same number of draws and of seeds per draw.
PairedBootstrapResult nested_paired_bootstrap(const MetricFn& metric, const DrawPredictions& a,
                                              const DrawPredictions& b, const std::vector<double>& labels,
                                              int64_t resamples = 10000, uint64_t rng_seed = 20210801);

// The smallest two-sided p-value that paired_bootstrap can report from `resamples` resamples.
double smallest_bootstrap_p(int64_t resamples);

struct RandomisationResult {
  double difference = 0;  // mean over seeds of metric(b) − metric(a) on the full evaluation set
  // (#{|d_shuffled| ≥ |d|} + 1) / (R + 1) over the R trials with a finite difference; the
  // smallest attainable value is 1 / (R + 1).
  double p_value = 1;
  int64_t trials = 0;   // trials with a finite difference
  int64_t dropped = 0;  // trials whose metric was not finite
};

// Approximate randomisation (Noreen 1989; Riezler & Maxwell 2005) of b against a: under the null
// hypothesis the two variants' predictions of an example are exchangeable, so each trial swaps
// them on every example with probability 1/2 (the same swaps for every seed) and recomputes the
// seed-mean difference. Same inputs, errors and generator discipline as paired_bootstrap.
RandomisationResult approximate_randomisation(const MetricFn& metric, const std::vector<std::vector<double>>& a,
                                              const std::vector<std::vector<double>>& b,
                                              const std::vector<double>& labels, int64_t trials = 10000,
                                              uint64_t rng_seed = 20210801);

// Holm–Bonferroni adjusted p-values (same order as the input, each in [0, 1]): reject H_i at level
// α when adjusted[i] ≤ α; controls the family-wise error rate for any dependence between tests.
std::vector<double> holm_adjust(const std::vector<double>& p_values);

}  // namespace tisa::metrics
