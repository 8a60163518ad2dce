// Confidence intervals, paired bootstrap and Holm's correction; see significance.h.
#include "metrics/significance.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <random>
#include <string>

#include "common/error.h"

namespace tisa::metrics {

double student_t_975(int64_t df) {
  if (df < 1) throw Error("student_t_975: degrees of freedom must be >= 1, got " + std::to_string(df));
  static constexpr std::array<double, 30> kTable = {
      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
      2.120,  2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df <= 30) return kTable[static_cast<size_t>(df - 1)];
  // Cornish–Fisher expansion of t around the normal quantile (Abramowitz & Stegun 26.7.5).
  const double z = 1.959963984540054, v = static_cast<double>(df);
  const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;
  return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v * v * v);
}

MeanInterval mean_interval_95(const std::vector<double>& values) {
  if (values.empty()) throw Error("mean_interval_95: no values");
  for (double x : values)
    if (!std::isfinite(x)) throw Error("mean_interval_95: a value is not finite (" + std::to_string(x) + ")");
  MeanInterval m;
  m.n = values.size();
  m.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(m.n);
  if (m.n == 1) {
    m.half_width = std::nan("");
    return m;
  }
  double ss = 0;
  for (double x : values) ss += (x - m.mean) * (x - m.mean);
  m.std = std::sqrt(ss / static_cast<double>(m.n - 1));
  m.half_width = student_t_975(static_cast<int64_t>(m.n) - 1) * m.std / std::sqrt(static_cast<double>(m.n));
  return m;
}

namespace {

// Linear interpolation between order statistics (NumPy's default "linear" percentile).
double percentile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

// Mean over seeds of metric(b[s]) − metric(a[s]) on the examples `rows`.
double seed_mean_difference(const MetricFn& metric, const std::vector<std::vector<double>>& a,
                            const std::vector<std::vector<double>>& b, const std::vector<double>& labels,
                            const std::vector<size_t>& rows, std::vector<double>& pa, std::vector<double>& pb,
                            std::vector<double>& pl) {
  pl.resize(rows.size());
  pa.resize(rows.size());
  pb.resize(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) pl[i] = labels[rows[i]];
  double sum = 0;
  for (size_t s = 0; s < a.size(); ++s) {
    for (size_t i = 0; i < rows.size(); ++i) {
      pa[i] = a[s][rows[i]];
      pb[i] = b[s][rows[i]];
    }
    sum += metric(pb, pl) - metric(pa, pl);
  }
  return sum / static_cast<double>(a.size());
}

// metric(b) − metric(a) of one seed pair on the examples `rows` (buffers as above).
double pair_difference(const MetricFn& metric, const std::vector<double>& a, const std::vector<double>& b,
                       const std::vector<double>& labels, const std::vector<size_t>& rows, std::vector<double>& pa,
                       std::vector<double>& pb, std::vector<double>& pl) {
  pl.resize(rows.size());
  pa.resize(rows.size());
  pb.resize(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    pl[i] = labels[rows[i]];
    pa[i] = a[rows[i]];
    pb[i] = b[rows[i]];
  }
  return metric(pb, pl) - metric(pa, pl);
}

// The checks shared by the paired tests: seeds paired, one prediction per label, enough draws.
void check_paired_inputs(const char* test, const std::vector<std::vector<double>>& a,
                         const std::vector<std::vector<double>>& b, const std::vector<double>& labels, int64_t draws) {
  const std::string name = test;
  if (a.empty() || a.size() != b.size())
    throw Error(name + ": expected the same number (> 0) of seeds for both variants, got " +
                std::to_string(a.size()) + " and " + std::to_string(b.size()));
  if (labels.empty()) throw Error(name + ": no examples");
  for (size_t s = 0; s < a.size(); ++s)
    if (a[s].size() != labels.size() || b[s].size() != labels.size())
      throw Error(name + ": seed " + std::to_string(s) + " has " + std::to_string(a[s].size()) + " and " +
                  std::to_string(b[s].size()) + " predictions for " + std::to_string(labels.size()) + " labels");
  if (draws < 100) throw Error(name + ": at least 100 resamples needed, got " + std::to_string(draws));
}

// A uniform index in [0, n) from one 64-bit draw.
size_t uniform_index(std::mt19937_64& rng, size_t n) {
  return static_cast<size_t>((static_cast<unsigned __int128>(rng()) * n) >> 64);
}

// Interval and smoothed two-sided p of the finite resampled differences (sorted here).
void summarise_resamples(std::vector<double>& diffs, PairedBootstrapResult& r) {
  r.resamples = static_cast<int64_t>(diffs.size());
  if (diffs.empty()) {
    r.low = r.high = r.p_value = std::nan("");
    return;
  }
  std::sort(diffs.begin(), diffs.end());
  r.low = percentile(diffs, 0.025);
  r.high = percentile(diffs, 0.975);
  const double m = static_cast<double>(diffs.size());
  const double at_most_zero = static_cast<double>(std::upper_bound(diffs.begin(), diffs.end(), 0.0) - diffs.begin());
  const double at_least_zero = static_cast<double>(diffs.end() - std::lower_bound(diffs.begin(), diffs.end(), 0.0));
  r.p_value = std::min(1.0, 2.0 * (std::min(at_most_zero, at_least_zero) + 1.0) / (m + 1.0));
}

}  // namespace

double smallest_bootstrap_p(int64_t resamples) { return std::min(1.0, 2.0 / static_cast<double>(resamples + 1)); }

PairedBootstrapResult paired_bootstrap(const MetricFn& metric, const std::vector<std::vector<double>>& a,
                                       const std::vector<std::vector<double>>& b, const std::vector<double>& labels,
                                       int64_t resamples, uint64_t rng_seed) {
  check_paired_inputs("paired_bootstrap", a, b, labels, resamples);

  const size_t n = labels.size();
  PairedBootstrapResult r;
  r.seeds = a.size();
  r.examples = n;
  std::vector<size_t> rows(n);
  std::iota(rows.begin(), rows.end(), size_t{0});
  std::vector<double> pa, pb, pl;
  r.difference = seed_mean_difference(metric, a, b, labels, rows, pa, pb, pl);

  // mt19937_64 is specified bit for bit by the standard, and the index map below is ours, so the
  // draws (and the p-values) are the same on every platform.
  std::mt19937_64 rng(rng_seed);
  std::vector<double> diffs;
  diffs.reserve(static_cast<size_t>(resamples));
  for (int64_t k = 0; k < resamples; ++k) {
    for (size_t i = 0; i < n; ++i) rows[i] = uniform_index(rng, n);
    const double d = seed_mean_difference(metric, a, b, labels, rows, pa, pb, pl);
    if (std::isfinite(d)) diffs.push_back(d);
    else ++r.dropped;
  }
  summarise_resamples(diffs, r);
  return r;
}

PairedBootstrapResult nested_paired_bootstrap(const MetricFn& metric, const DrawPredictions& a,
                                              const DrawPredictions& b, const std::vector<double>& labels,
                                              int64_t resamples, uint64_t rng_seed) {
  if (a.empty() || a.size() != b.size())
    throw Error("nested_paired_bootstrap: expected the same number (> 0) of pretraining draws for both variants, got " +
                std::to_string(a.size()) + " and " + std::to_string(b.size()));
  size_t seeds = 0;
  for (size_t d = 0; d < a.size(); ++d) {
    if (a[d].empty() || a[d].size() != b[d].size())
      throw Error("nested_paired_bootstrap: pretraining draw " + std::to_string(d) + " has " +
                  std::to_string(a[d].size()) + " and " + std::to_string(b[d].size()) +
                  " fine-tuning seeds (expected the same number, > 0)");
    check_paired_inputs("nested_paired_bootstrap", a[d], b[d], labels, resamples);
    seeds += a[d].size();
  }
  const size_t n = labels.size();
  PairedBootstrapResult r;
  r.seeds = seeds;
  r.examples = n;
  std::vector<size_t> rows(n);
  std::iota(rows.begin(), rows.end(), size_t{0});
  std::vector<double> pa, pb, pl;
  // Per (draw, seed) differences on the rows of this resample; the mean over the drawn pairs.
  auto difference = [&](const std::vector<std::pair<size_t, size_t>>& pairs) {
    double sum = 0;
    for (const auto& [d, s] : pairs) sum += pair_difference(metric, a[d][s], b[d][s], labels, rows, pa, pb, pl);
    return sum / static_cast<double>(pairs.size());
  };
  std::vector<std::pair<size_t, size_t>> all;
  for (size_t d = 0; d < a.size(); ++d)
    for (size_t s = 0; s < a[d].size(); ++s) all.emplace_back(d, s);
  r.difference = difference(all);

  std::mt19937_64 rng(rng_seed);
  std::vector<double> diffs;
  diffs.reserve(static_cast<size_t>(resamples));
  std::vector<std::pair<size_t, size_t>> pairs;
  for (int64_t k = 0; k < resamples; ++k) {
    pairs.clear();
    for (size_t i = 0; i < a.size(); ++i) {
      const size_t d = uniform_index(rng, a.size());
      for (size_t j = 0; j < a[d].size(); ++j) pairs.emplace_back(d, uniform_index(rng, a[d].size()));
    }
    for (size_t i = 0; i < n; ++i) rows[i] = uniform_index(rng, n);
    const double diff = difference(pairs);
    if (std::isfinite(diff)) diffs.push_back(diff);
    else ++r.dropped;
  }
  summarise_resamples(diffs, r);
  return r;
}

RandomisationResult approximate_randomisation(const MetricFn& metric, const std::vector<std::vector<double>>& a,
                                              const std::vector<std::vector<double>>& b,
                                              const std::vector<double>& labels, int64_t trials, uint64_t rng_seed) {
  check_paired_inputs("approximate_randomisation", a, b, labels, trials);
  const size_t n = labels.size();
  RandomisationResult r;
  std::vector<size_t> rows(n);
  std::iota(rows.begin(), rows.end(), size_t{0});
  std::vector<double> pa, pb, pl;
  r.difference = seed_mean_difference(metric, a, b, labels, rows, pa, pb, pl);
  const double observed = std::abs(r.difference);
  // Differences that equal the observed one up to rounding count as "at least as large".
  const double tie = 1e-12 * std::max(1.0, observed);
  std::vector<std::vector<double>> sa = a, sb = b;
  std::mt19937_64 rng(rng_seed);
  int64_t extreme = 0;
  for (int64_t k = 0; k < trials; ++k) {
    for (size_t i = 0; i < n; i += 64) {
      const uint64_t bits = rng();  // one bit per example: swap the variants there
      for (size_t j = i; j < std::min(n, i + 64); ++j) {
        const bool swap = (bits >> (j - i)) & 1u;
        for (size_t s = 0; s < a.size(); ++s) {
          sa[s][j] = swap ? b[s][j] : a[s][j];
          sb[s][j] = swap ? a[s][j] : b[s][j];
        }
      }
    }
    const double d = seed_mean_difference(metric, sa, sb, labels, rows, pa, pb, pl);
    if (!std::isfinite(d)) {
      ++r.dropped;
      continue;
    }
    ++r.trials;
    if (std::abs(d) >= observed - tie) ++extreme;
  }
  r.p_value = r.trials == 0 ? std::nan("")
                            : static_cast<double>(extreme + 1) / static_cast<double>(r.trials + 1);
  return r;
}

std::vector<double> holm_adjust(const std::vector<double>& p_values) {
  const size_t m = p_values.size();
  std::vector<size_t> order(m);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t i, size_t j) { return p_values[i] < p_values[j]; });
  std::vector<double> adjusted(m);
  double running = 0;  // adjusted p-values are made monotone in the sorted order
  for (size_t k = 0; k < m; ++k) {
    const double p = p_values[order[k]];
    if (!(p >= 0 && p <= 1)) throw Error("holm_adjust: p-value " + std::to_string(p) + " is not in [0, 1]");
    running = std::max(running, std::min(1.0, static_cast<double>(m - k) * p));
    adjusted[order[k]] = running;
  }
  return adjusted;
}

}  // namespace tisa::metrics
