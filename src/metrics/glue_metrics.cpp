// GLUE metrics (see glue_metrics.h). Formulas follow scikit-learn 1.2 and SciPy 1.10 so that the
// goldens (shared/golden/metrics/metrics.json) agree to 1e-12.
#include "metrics/glue_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "common/error.h"

namespace tisa::metrics {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void check_sizes(size_t a, size_t b, const char* what) {
  if (a != b)
    throw Error(std::string(what) + ": labels and predictions differ in length (" + std::to_string(a) + " vs " +
                std::to_string(b) + ")");
  if (a == 0) throw Error(std::string(what) + ": no examples");
}

bool is_constant(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [&](double x) { return x == v[0]; });
}

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

}  // namespace

double accuracy(const std::vector<int64_t>& labels, const std::vector<int64_t>& preds) {
  check_sizes(labels.size(), preds.size(), "accuracy");
  size_t correct = 0;
  for (size_t i = 0; i < labels.size(); ++i) correct += labels[i] == preds[i];
  return static_cast<double>(correct) / static_cast<double>(labels.size());
}

double f1_binary(const std::vector<int64_t>& labels, const std::vector<int64_t>& preds) {
  check_sizes(labels.size(), preds.size(), "f1");
  int64_t tp = 0, fp = 0, fn = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    if ((labels[i] != 0 && labels[i] != 1) || (preds[i] != 0 && preds[i] != 1))
      throw Error("f1: binary F1 needs class ids 0 and 1, got label " + std::to_string(labels[i]) +
                  " and prediction " + std::to_string(preds[i]) + " at position " + std::to_string(i));
    tp += labels[i] == 1 && preds[i] == 1;
    fp += labels[i] == 0 && preds[i] == 1;
    fn += labels[i] == 1 && preds[i] == 0;
  }
  // sklearn: precision and recall with zero_division → 0, then F = 2PR/(P+R), 0 when P+R = 0.
  const double precision = tp + fp == 0 ? 0.0 : static_cast<double>(tp) / static_cast<double>(tp + fp);
  const double recall = tp + fn == 0 ? 0.0 : static_cast<double>(tp) / static_cast<double>(tp + fn);
  if (precision + recall == 0) return 0.0;
  return 2 * precision * recall / (precision + recall);
}

double matthews_corrcoef(const std::vector<int64_t>& labels, const std::vector<int64_t>& preds) {
  check_sizes(labels.size(), preds.size(), "matthews_corrcoef");
  int64_t max_class = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || preds[i] < 0)
      throw Error("matthews_corrcoef: negative class id at position " + std::to_string(i));
    max_class = std::max({max_class, labels[i], preds[i]});
  }
  const size_t k = static_cast<size_t>(max_class) + 1;
  // t_sum[c] = true count of class c, p_sum[c] = predicted count; multi-class MCC (Gorodkin):
  // (correct·n − t·p) / sqrt((n² − p·p)(n² − t·t)).
  std::vector<double> t_sum(k, 0), p_sum(k, 0);
  double correct = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    t_sum[static_cast<size_t>(labels[i])] += 1;
    p_sum[static_cast<size_t>(preds[i])] += 1;
    correct += labels[i] == preds[i];
  }
  const double n = static_cast<double>(labels.size());
  double tp = 0, pp = 0, tt = 0;
  for (size_t c = 0; c < k; ++c) {
    tp += t_sum[c] * p_sum[c];
    pp += p_sum[c] * p_sum[c];
    tt += t_sum[c] * t_sum[c];
  }
  const double cov_ytyp = correct * n - tp;
  const double cov_ypyp = n * n - pp;
  const double cov_ytyt = n * n - tt;
  if (cov_ypyp * cov_ytyt == 0) return 0.0;
  return cov_ytyp / std::sqrt(cov_ytyt * cov_ypyp);
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  check_sizes(x.size(), y.size(), "pearson");
  if (x.size() < 2) throw Error("pearson: needs at least 2 values, got " + std::to_string(x.size()));
  if (is_constant(x) || is_constant(y)) return kNaN;  // SciPy: ConstantInputWarning, NaN
  const double mx = mean(x), my = mean(y);
  double sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  const double nx = std::sqrt(sxx), ny = std::sqrt(syy);
  double r = 0;
  for (size_t i = 0; i < x.size(); ++i) r += ((x[i] - mx) / nx) * ((y[i] - my) / ny);
  return std::max(-1.0, std::min(1.0, r));
}

std::vector<double> average_ranks(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    // positions i..j (0-based) share the average 1-based rank
    const double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (size_t t = i; t <= j; ++t) ranks[order[t]] = rank;
    i = j + 1;
  }
  return ranks;
}

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  check_sizes(x.size(), y.size(), "spearman");
  if (x.size() < 2) throw Error("spearman: needs at least 2 values, got " + std::to_string(x.size()));
  for (size_t i = 0; i < x.size(); ++i)
    if (std::isnan(x[i]) || std::isnan(y[i])) return kNaN;  // SciPy's default nan_policy propagates
  if (is_constant(x) || is_constant(y)) return kNaN;
  return pearson(average_ranks(x), average_ranks(y));
}

double MetricSet::get(const std::string& key) const {
  for (const auto& [name, value] : values)
    if (name == key) return value;
  std::string known;
  for (const auto& [name, value] : values) known += (known.empty() ? "" : ", ") + name;
  throw Error("metric '" + key + "' not computed (available: " + known + ")");
}

std::string metric_task_name(const std::string& task) {
  std::string name;
  data::find_glue_task_by_metric_name(task, &name);
  return name;
}

namespace {

// Class ids from whole-number doubles (the trainer hands predictions and labels over as doubles).
std::vector<int64_t> class_ids(const std::vector<double>& v, const std::string& task, const char* what) {
  std::vector<int64_t> ids(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (!(v[i] >= 0) || v[i] != std::floor(v[i]) || v[i] > 1e9)
      throw Error("glue metrics for " + task + ": " + what + " " + std::to_string(i) +
                  " is not a class id: " + std::to_string(v[i]));
    ids[i] = static_cast<int64_t>(v[i]);
  }
  return ids;
}

}  // namespace

MetricSet compute_task_metrics(const data::GlueTask& task, const std::string& metric_task,
                               const std::vector<double>& preds, const std::vector<double>& labels) {
  using data::GlueMetric;
  check_sizes(labels.size(), preds.size(), ("glue metrics for " + metric_task).c_str());
  // Class-id metrics compare ids: convert once (and refuse fractional "classes").
  std::vector<int64_t> p, l;
  if (!task.regression) p = class_ids(preds, metric_task, "prediction"), l = class_ids(labels, metric_task, "label");
  auto value = [&](GlueMetric m) {
    switch (m) {
      case GlueMetric::kAccuracy: return accuracy(l, p);
      case GlueMetric::kF1: return f1_binary(l, p);
      case GlueMetric::kAccAndF1: return (accuracy(l, p) + f1_binary(l, p)) / 2;
      case GlueMetric::kMcc: return matthews_corrcoef(l, p);
      case GlueMetric::kPearson: return pearson(preds, labels);
      case GlueMetric::kSpearman: return spearman(preds, labels);
      case GlueMetric::kCorr: return (pearson(preds, labels) + spearman(preds, labels)) / 2;
    }
    throw Error("unknown GlueMetric " + std::to_string(static_cast<int>(m)));
  };
  MetricSet out;
  for (GlueMetric m : task.metrics) out.values.emplace_back(task.metric_key(m, metric_task), value(m));
  out.main = task.metric_key(task.main, metric_task);
  return out;
}

MetricSet glue_compute_metrics(const std::string& task, const std::vector<double>& preds,
                               const std::vector<double>& labels) {
  std::string metric_task;
  const data::GlueTask& t = data::find_glue_task_by_metric_name(task, &metric_task);
  return compute_task_metrics(t, metric_task, preds, labels);
}

}  // namespace tisa::metrics
