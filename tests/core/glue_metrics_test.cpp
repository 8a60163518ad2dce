// GLUE metrics against shared/golden/metrics/metrics.json (scikit-learn 1.2.1, SciPy 1.10.1,
// transformers 4.30.2's glue_compute_metrics): every case, every value, close(1e-12, 1e-12);
// null (NaN in SciPy) must come back as NaN. Plus hand-computed cases and error paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/fs.h"
#include "metrics/glue_metrics.h"
#include "support/test_paths.h"

namespace m = tisa::metrics;

namespace {

double g_max_abs_diff = 0;  // largest deviation from the goldens, printed at the end

// close(rtol, atol) as numpy.isclose: |a - b| <= atol + rtol * |b|; null expects NaN.
void expect_close(double actual, const nlohmann::json& expected, const std::string& what) {
  if (expected.is_null()) {
    EXPECT_TRUE(std::isnan(actual)) << what << ": expected NaN (null), got " << actual;
    return;
  }
  const double b = expected.get<double>();
  g_max_abs_diff = std::max(g_max_abs_diff, std::fabs(actual - b));
  EXPECT_LE(std::fabs(actual - b), 1e-12 + 1e-12 * std::fabs(b))
      << what << ": got " << actual << ", golden " << b;
}

std::vector<int64_t> ints(const nlohmann::json& j) {
  std::vector<int64_t> out;
  for (const auto& v : j) out.push_back(v.get<int64_t>());
  return out;
}
std::vector<double> doubles(const nlohmann::json& j) {
  std::vector<double> out;
  for (const auto& v : j) out.push_back(v.get<double>());
  return out;
}

}  // namespace

TEST(GlueMetricsTest, GoldenEveryCase) {
  TISA_REQUIRE_SHARED("golden/metrics/metrics.json");
  auto golden = nlohmann::json::parse(tisa::fs::read_file(tisa::test::shared_path("golden/metrics/metrics.json")));
  int cases = 0, values = 0;
  for (const auto& c : golden["cases"]) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    if (c["kind"] == "classification") {
      auto labels = ints(c["labels"]), preds = ints(c["preds"]);
      expect_close(m::accuracy(labels, preds), c["accuracy"], name + " accuracy");
      expect_close(m::matthews_corrcoef(labels, preds), c["mcc"], name + " mcc");
      values += 2;
      if (c.contains("f1")) {
        expect_close(m::f1_binary(labels, preds), c["f1"], name + " f1");
        ++values;
      }
    } else {
      auto labels = doubles(c["labels"]), preds = doubles(c["preds"]);
      expect_close(m::pearson(preds, labels), c["pearson"], name + " pearson");
      expect_close(m::spearman(preds, labels), c["spearman"], name + " spearman");
      values += 2;
    }
    // The task-level set: same keys as transformers, same values.
    m::MetricSet set = m::glue_compute_metrics(c["glue_task"], doubles(c["preds"]), doubles(c["labels"]));
    const auto& expected = c["glue_compute_metrics"];
    EXPECT_EQ(set.values.size(), expected.size());
    for (auto it = expected.begin(); it != expected.end(); ++it) {
      expect_close(set.get(it.key()), it.value(), name + " glue " + it.key());
      ++values;
    }
    ++cases;
  }
  EXPECT_EQ(cases, 20);
  EXPECT_GE(values, 80);
  std::printf("[metrics] %d golden cases, %d values, max |diff| %.3g\n", cases, values, g_max_abs_diff);
}

TEST(GlueMetricsTest, HandCounted) {
  // TP 4, FN 2, FP 1, TN 3.
  std::vector<int64_t> labels{1, 1, 1, 1, 1, 1, 0, 0, 0, 0};
  std::vector<int64_t> preds{1, 1, 1, 1, 0, 0, 1, 0, 0, 0};
  EXPECT_DOUBLE_EQ(m::accuracy(labels, preds), 0.7);
  EXPECT_NEAR(m::f1_binary(labels, preds), 8.0 / 11.0, 1e-15);
  EXPECT_NEAR(m::matthews_corrcoef(labels, preds), 10.0 / std::sqrt(600.0), 1e-15);
  // Zero denominators: constant predictions → MCC 0; no positives at all → F1 0.
  EXPECT_EQ(m::matthews_corrcoef({0, 1, 0}, {1, 1, 1}), 0.0);
  EXPECT_EQ(m::f1_binary({0, 0}, {0, 0}), 0.0);
}

TEST(GlueMetricsTest, AverageRanksAndSpearmanTies) {
  EXPECT_EQ(m::average_ranks({10, 20, 10, 30, 20, 20}), (std::vector<double>{1.5, 4, 1.5, 6, 4, 4}));
  EXPECT_NEAR(m::spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0, 1e-15);
  EXPECT_NEAR(m::spearman({1, 2, 3, 4}, {1, 4, 9, 16}), 1.0, 1e-15);
  EXPECT_TRUE(std::isnan(m::spearman({1, 1, 1}, {1, 2, 3})));
  EXPECT_TRUE(std::isnan(m::pearson({1, 2, 3}, {5, 5, 5})));
}

TEST(GlueMetricsTest, TaskNamesAndMainMetric) {
  EXPECT_EQ(m::metric_task_name("CoLA"), "cola");
  EXPECT_EQ(m::metric_task_name("SST-2"), "sst-2");
  EXPECT_EQ(m::metric_task_name("stsb"), "sts-b");
  EXPECT_EQ(m::metric_task_name("MNLI-mm"), "mnli-mm");
  EXPECT_EQ(m::metric_task_name("AX"), "ax");
  EXPECT_EQ(m::glue_compute_metrics("MRPC", {1, 0}, {1, 1}).main, "acc_and_f1");
  EXPECT_EQ(m::glue_compute_metrics("STS-B", {1, 2, 3}, {1, 2, 4}).main, "corr");
  EXPECT_EQ(m::glue_compute_metrics("MNLI-mm", {0, 2}, {0, 1}).values[0].first, "mnli-mm/acc");
  EXPECT_DOUBLE_EQ(m::glue_compute_metrics("RTE", {0, 1, 1, 1}, {0, 1, 0, 1}).main_value(), 0.75);
  EXPECT_DOUBLE_EQ(m::glue_compute_metrics("AX", {0, 1, 2}, {0, 1, 2}).get("mcc"), 1.0);
}

// Issue 16: which metrics a task reports is a row of the task table; every task gets exactly the
// keys of transformers 4.30's glue_compute_metrics (AX: the diagnostic's MCC), in that order, and
// its main metric is the table's.
TEST(GlueMetricsTest, EveryTaskComputesWhatTheTableLists) {
  const std::map<std::string, std::vector<std::string>> transformers_keys = {
      {"CoLA", {"mcc"}},
      {"SST-2", {"acc"}},
      {"MRPC", {"acc", "f1", "acc_and_f1"}},
      {"STS-B", {"pearson", "spearmanr", "corr"}},
      {"QQP", {"acc", "f1", "acc_and_f1"}},
      {"MNLI", {"mnli/acc"}},
      {"QNLI", {"acc"}},
      {"RTE", {"acc"}},
      {"WNLI", {"acc"}},
      {"AX", {"mcc"}}};
  const std::vector<double> preds{0, 1, 1, 0, 1, 2}, labels{0, 1, 0, 0, 1, 1};
  const std::vector<double> binary_preds{0, 1, 1, 0, 1, 1};
  EXPECT_EQ(tisa::data::glue_tasks().size(), transformers_keys.size());
  for (const auto& task : tisa::data::glue_tasks()) {
    SCOPED_TRACE(task.name);
    const bool binary = task.labels.size() == 2;
    m::MetricSet set = m::glue_compute_metrics(task.name, binary ? binary_preds : preds, labels);
    std::vector<std::string> keys;
    for (const auto& [key, value] : set.values) keys.push_back(key);
    EXPECT_EQ(keys, transformers_keys.at(task.name));
    ASSERT_EQ(keys.size(), task.metrics.size());
    for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(keys[i], task.metric_key(task.metrics[i], task.metric_task));
    if (task.trainable()) {
      EXPECT_EQ(set.main, task.main_metric);
    }
    EXPECT_EQ(m::metric_task_name(task.name), task.metric_task);
    // Hand-checked values of the shared inputs: 4 of 6 right.
    if (set.values[0].first == "acc" || set.values[0].first == "mnli/acc") {
      EXPECT_DOUBLE_EQ(set.values[0].second, binary ? 5.0 / 6.0 : 4.0 / 6.0);
    }
  }
  // A split with its own metrics name (MNLI's mismatched sets) keys its values apart.
  m::MetricSet mm = m::glue_compute_metrics("mnli-mm", preds, labels);
  EXPECT_EQ(mm.main, "mnli-mm/acc");
  EXPECT_EQ(mm.values.size(), 1u);
  // Direct form: a task row and a metrics name.
  const auto& mrpc = tisa::data::find_glue_task("MRPC");
  m::MetricSet direct = m::compute_task_metrics(mrpc, mrpc.metric_task, binary_preds, labels);
  EXPECT_DOUBLE_EQ(direct.get("acc_and_f1"), (direct.get("acc") + direct.get("f1")) / 2);
}

TEST(GlueMetricsTest, Errors) {
  auto message = [](auto fn) {
    try {
      fn();
    } catch (const tisa::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] { m::accuracy({1, 0}, {1}); }).find("differ in length (2 vs 1)"), std::string::npos);
  EXPECT_NE(message([] { m::f1_binary({2}, {1}); }).find("binary F1 needs class ids 0 and 1"), std::string::npos);
  EXPECT_NE(message([] { m::glue_compute_metrics("sst", {1}, {1}); }).find("unknown GLUE task 'sst'"),
            std::string::npos);
  EXPECT_NE(message([] { m::glue_compute_metrics("CoLA", {0.5}, {1}); }).find("is not a class id"),
            std::string::npos);
  EXPECT_NE(message([] { m::accuracy({}, {}); }).find("no examples"), std::string::npos);
}
