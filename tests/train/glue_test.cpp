// Unit tests of the GLUE fine-tuning pieces that do not need a model: seed summaries, batching,
// sampling, the task table, step/warmup resolution and the per-task defaults.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <set>

#include "common/error.h"
#include "common/fs.h"
#include "config/config_loader.h"
#include "data/glue_tsv.h"
#include "glue/finetune.h"
#include "glue/glue_batches.h"
#include "glue/glue_runner.h"
#include "glue/glue_tasks.h"
#include "glue/seed_summary.h"
#include "support/expect_error.h"
#include "support/test_paths.h"

using namespace tisa;

TEST(GlueSeedSummary, MeanSampleStdAndMedianByHand) {
  // acc over 4 seeds: 0.5, 0.7, 0.6, 0.8 → mean 0.65, median 0.65,
  // sample std sqrt(((.15² + .05² + .05² + .15²)/3)) = sqrt(0.05/3).
  std::map<int64_t, std::map<std::string, double>> runs = {{1, {{"acc", 0.5}, {"f1", 1.0}}},
                                                            {2, {{"acc", 0.7}, {"f1", 2.0}}},
                                                            {3, {{"acc", 0.6}, {"f1", 4.0}}},
                                                            {4, {{"acc", 0.8}}}};
  auto s = glue::summarize_runs(runs);
  EXPECT_NEAR(s["acc"].mean, 0.65, 1e-12);
  EXPECT_NEAR(s["acc"].median, 0.65, 1e-12);
  EXPECT_NEAR(s["acc"].std, std::sqrt(0.05 / 3.0), 1e-12);
  EXPECT_EQ(s["acc"].runs, 4u);
  EXPECT_NEAR(s["f1"].median, 2.0, 1e-12);  // odd count: the middle value
  EXPECT_EQ(s["f1"].runs, 3u);
  auto one = glue::summarize_runs({{7, {{"mcc", 0.3}}}});
  EXPECT_EQ(one["mcc"].std, 0.0);
  auto j = glue::summary_to_json(s);
  EXPECT_NEAR(j["acc"]["std"].get<double>(), std::sqrt(0.05 / 3.0), 1e-12);
  auto table = glue::format_summary_table("SST-2", s);
  EXPECT_NE(table.find("0.6500"), std::string::npos) << table;
}

// Issue 36: seeds are a set. `--seeds 1,1,2` would train seed 1 twice into one folder and count it
// twice in the mean; a list with an empty item (`--seeds ,`) names no seed.
TEST(GlueSeedSet, DuplicatesAndEmptyItemsAreRefusedByName) {
  EXPECT_EQ(glue::parse_seed_list("3,1,2"), (std::vector<int64_t>{3, 1, 2}));
  EXPECT_EQ(glue::parse_seed_list("-4"), (std::vector<int64_t>{-4}));
  EXPECT_HAS(test::error_of([] { glue::parse_seed_list("1,1,2"); }), "seed 1 is given twice");
  EXPECT_HAS(test::error_of([] { glue::parse_seed_list(","); }), "--seeds ',': an empty item between commas");
  EXPECT_HAS(test::error_of([] { glue::parse_seed_list("1,,2"); }), "an empty item between commas");
  EXPECT_HAS(test::error_of([] { glue::parse_seed_list("1,2,"); }), "an empty item after the last comma");
  EXPECT_HAS(test::error_of([] { glue::parse_seed_list(""); }), "no seeds");
  EXPECT_HAS(test::error_of([] { glue::parse_seed_list("1,x"); }), "'x' is not an integer");
  EXPECT_HAS(test::error_of([] { glue::check_distinct_seeds({5, 6, 5}); }), "seed 5 is given twice");
  EXPECT_NO_THROW(glue::check_distinct_seeds({}));
}

TEST(GlueBatches, DynamicPaddingMaskAndLabels) {
  data::GlueEncodedSplit s;
  s.split = "dev";
  s.has_labels = true;
  s.add({2, 10, 3}, {0, 0, 0}, 1.0f, 0, 2);
  s.add({2, 11, 12, 3, 13, 3}, {0, 0, 0, 0, 1, 1}, 0.0f, 1, 3);
  auto b = glue::make_glue_batch(s, {0, 1}, /*pad_id=*/0, torch::kCPU);
  ASSERT_EQ(b.input_ids.sizes(), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(b.input_ids[0][3].item<int64_t>(), 0);
  EXPECT_EQ(b.attention_mask[0].sum().item<int64_t>(), 3);
  EXPECT_EQ(b.attention_mask[1].sum().item<int64_t>(), 6);
  EXPECT_EQ(b.token_type_ids[1][4].item<int64_t>(), 1);
  EXPECT_EQ(b.labels.scalar_type(), torch::kInt64);
  EXPECT_EQ(b.labels[0].item<int64_t>(), 1);
  s.regression = true;
  auto r = glue::make_glue_batch(s, {1}, 0, torch::kCPU);
  EXPECT_EQ(r.labels.scalar_type(), torch::kFloat32);
  data::GlueEncodedSplit t = s;
  t.has_labels = false;
  EXPECT_FALSE(glue::make_glue_batch(t, {0}, 0, torch::kCPU).labels.defined());
}

TEST(GlueBatches, SamplerCoversEveryExampleOncePerEpochAndIsSeeded) {
  glue::GlueSampler a(10, 7), b(10, 7), c(10, 8);
  std::set<size_t> seen;
  std::vector<size_t> first;
  for (int i = 0; i < 5; ++i)
    for (size_t r : a.next(2)) {
      seen.insert(r);
      first.push_back(r);
    }
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_EQ(a.epoch(), 0);
  a.next(1);
  EXPECT_EQ(a.epoch(), 1);
  std::vector<size_t> again;
  for (int i = 0; i < 5; ++i)
    for (size_t r : b.next(2)) again.push_back(r);
  EXPECT_EQ(first, again);
  std::vector<size_t> other;
  for (int i = 0; i < 5; ++i)
    for (size_t r : c.next(2)) other.push_back(r);
  EXPECT_NE(first, other);
}

// Exact resume (issue 16): a sampler sought to another's position continues identically, across
// epoch boundaries too.
TEST(GlueBatches, SamplerSeekContinuesExactly) {
  glue::GlueSampler a(10, 7);
  for (int i = 0; i < 7; ++i) a.next(3);  // 21 rows: epoch 2, index 1
  glue::GlueSampler b(10, 7);
  b.seek(a.position());
  EXPECT_EQ(b.position(), a.position());
  for (int i = 0; i < 9; ++i) EXPECT_EQ(a.next(3), b.next(3)) << i;
  EXPECT_THROW(b.seek(nlohmann::json{{"epoch", 0}, {"index", 11}}), Error);
}

// Length grouping: every epoch still covers each example once; inside each window of 6 rows the
// lengths fall; the windows differ between epochs and seeds; seek() replays grouped epochs too.
TEST(GlueBatches, LengthGroupedSamplerSortsWindowsAndStaysExact) {
  std::vector<int64_t> lengths;
  for (int64_t i = 0; i < 30; ++i) lengths.push_back((i * 7) % 23 + 2);
  glue::GlueSampler a(30, 5, lengths, 6), b(30, 5, lengths, 6), plain(30, 5);
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::set<size_t> seen;
    for (int w = 0; w < 5; ++w) {
      const auto rows = a.next(6);
      for (size_t i = 0; i < rows.size(); ++i) {
        seen.insert(rows[i]);
        if (i) {
          EXPECT_GE(lengths[rows[i - 1]], lengths[rows[i]]) << "epoch " << epoch << " window " << w;
        }
      }
    }
    EXPECT_EQ(seen.size(), 30u);
  }
  std::vector<size_t> grouped, shuffled;
  for (int i = 0; i < 5; ++i) {
    for (size_t r : b.next(6)) grouped.push_back(r);
    for (size_t r : plain.next(6)) shuffled.push_back(r);
  }
  // Same permutation, only reordered inside windows: the same rows per window.
  for (size_t w = 0; w < 5; ++w)
    EXPECT_EQ(std::set<size_t>(grouped.begin() + 6 * w, grouped.begin() + 6 * w + 6),
              std::set<size_t>(shuffled.begin() + 6 * w, shuffled.begin() + 6 * w + 6));
  glue::GlueSampler c(30, 5, lengths, 6);
  for (int i = 0; i < 13; ++i) c.next(4);
  glue::GlueSampler d(30, 5, lengths, 6);
  d.seek(c.position());
  for (int i = 0; i < 20; ++i) EXPECT_EQ(c.next(4), d.next(4)) << i;
  EXPECT_THROW(glue::GlueSampler(30, 5, std::vector<int64_t>(29, 1), 6), Error);
}

TEST(GlueBatches, EvalBatchesAreLengthSortedAndComplete) {
  data::GlueEncodedSplit s;
  for (int n : {5, 2, 9, 3, 7}) s.add(std::vector<int32_t>(n, 1), std::vector<int32_t>(n, 0), 0.0f, 0, 0);
  auto batches = glue::eval_batches(s, 2);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0], (std::vector<size_t>{1, 3}));
  EXPECT_EQ(batches[2], (std::vector<size_t>{2}));
}

TEST(GlueTasks, TableFollowsSpecAndTsvLabels) {
  EXPECT_EQ(glue::glue_task_names().size(), 9u);
  EXPECT_EQ(glue::glue_task("sst2").name, "SST-2");
  EXPECT_EQ(glue::glue_task("sts-b").num_labels(), 1);
  const auto& mnli = glue::glue_task("MNLI");
  EXPECT_EQ(mnli.labels, (std::vector<std::string>{"contradiction", "entailment", "neutral"}));
  EXPECT_EQ(mnli.dev_splits, (std::vector<std::string>{"dev_matched", "dev_mismatched"}));
  ASSERT_EQ(mnli.test_splits.size(), 3u);
  EXPECT_EQ(mnli.test_splits[0].leaderboard, "MNLI-m.tsv");
  EXPECT_EQ(mnli.test_splits[1].leaderboard, "MNLI-mm.tsv");
  EXPECT_EQ(mnli.test_splits[2].leaderboard, "AX.tsv");
  EXPECT_EQ(glue::metrics_task_for_split(mnli, "dev_mismatched"), "mnli-mm");
  EXPECT_EQ(glue::glue_task("RTE").labels, (std::vector<std::string>{"entailment", "not_entailment"}));
  EXPECT_EQ(glue::glue_task("CoLA").main_metric, "mcc");
  EXPECT_THROW(glue::glue_task("SQuAD"), Error);
}

// Issue 16: one GLUE task table (data/glue_tsv.cpp) holds files, columns, labels, metrics, the
// main metric and the default hyper-parameters; the trainer's view, the built-in defaults and
// the metric names of each split are derived from it.
TEST(GlueTasks, OneTableDescribesEveryTask) {
  for (const auto& name : glue::glue_task_names()) {
    const data::GlueTask& t = data::find_glue_task(name);
    const glue::GlueTaskInfo& info = glue::glue_task(name);
    EXPECT_TRUE(t.trainable()) << name;
    EXPECT_EQ(info.main_metric, t.main_metric) << name;
    EXPECT_FALSE(t.main_metric.empty()) << name;
    EXPECT_GT(t.defaults.lr, 0) << name;
    EXPECT_GT(t.defaults.batch_size, 0) << name;
    EXPECT_GT(t.defaults.steps, t.defaults.warmup_steps) << name;
    EXPECT_EQ(info.dev_splits.front(), t.main_dev_split().name) << name;
    auto builtin = config::config_from_overrides(glue::task_default_overrides(name)).glue;
    EXPECT_EQ(builtin.lr, t.defaults.lr) << name;
    EXPECT_EQ(builtin.batch_size, t.defaults.batch_size) << name;
    EXPECT_EQ(builtin.steps, t.defaults.steps) << name;
    EXPECT_EQ(builtin.warmup_steps, t.defaults.warmup_steps) << name;
  }
  // AX is test-only, predicted by the MNLI model; its metric names come from the table too.
  EXPECT_FALSE(data::find_glue_task("AX").trainable());
  EXPECT_EQ(data::find_glue_task("AX").predicted_by, "MNLI");
  EXPECT_THROW(glue::glue_task("AX"), Error);
  const auto& mnli = glue::glue_task("MNLI");
  EXPECT_EQ(glue::metrics_task_for_split(mnli, "dev_matched"), "mnli");
  EXPECT_EQ(glue::metrics_task_for_split(mnli, "diagnostic"), "ax");
  EXPECT_EQ(glue::metrics_task_for_split(glue::glue_task("STS-B"), "dev"), "sts-b");
  EXPECT_EQ(data::find_glue_task("MNLI").main_dev_split().file, "dev_matched.tsv");
  // One name rule on both sides.
  for (const char* spelling : {"sst2", "SST-2", "sst_2", "Sst 2"}) {
    EXPECT_EQ(glue::glue_task(spelling).name, "SST-2") << spelling;
    EXPECT_EQ(data::find_glue_task(spelling).name, "SST-2") << spelling;
  }
}

TEST(GlueSteps, StepsFromEpochsAndWarmupFromFraction) {
  config::GlueConfig g;
  g.steps = 0;
  g.epochs = 3;
  g.batch_size = 32;
  EXPECT_EQ(glue::resolve_glue_steps(g, 100), 10);  // ceil(300 / 32)
  g.steps = 800;
  EXPECT_EQ(glue::resolve_glue_steps(g, 100), 800);
  g.warmup_steps = 0;
  g.warmup_fraction = 0.1;
  EXPECT_EQ(glue::resolve_glue_warmup(g, 801), 81);
  g.warmup_steps = 200;
  EXPECT_EQ(glue::resolve_glue_warmup(g, 800), 200);
}

// Issue 16: the task table is the one source of a task's settings. Without --config a task gets
// config.h's defaults with the table's four numbers on top, then --set; --print-config shows the
// same settings as YAML that loads back unchanged.
TEST(GlueDefaults, EffectiveSettingsAreDefaultsPlusTheTableRow) {
  const config::GlueConfig defaults = config::default_config().glue;
  for (const auto& task : glue::glue_task_names()) {
    const data::GlueTask& row = data::find_glue_task(task);
    std::string source;
    const config::Config cfg = glue::task_config(task, "", {}, &source);
    EXPECT_NE(source.find("task table"), std::string::npos) << source;
    EXPECT_EQ(cfg.glue.task, task);
    EXPECT_EQ(cfg.glue.lr, row.defaults.lr) << task;
    EXPECT_EQ(cfg.glue.batch_size, row.defaults.batch_size) << task;
    EXPECT_EQ(cfg.glue.steps, row.defaults.steps) << task;
    EXPECT_EQ(cfg.glue.warmup_steps, row.defaults.warmup_steps) << task;
    // Task-independent settings: config.h's, in one place.
    EXPECT_EQ(cfg.glue.max_length, defaults.max_length) << task;
    EXPECT_EQ(cfg.glue.weight_decay, defaults.weight_decay) << task;
    EXPECT_EQ(cfg.glue.classifier_dropout, defaults.classifier_dropout) << task;
    EXPECT_EQ(cfg.glue.eval_interval, defaults.eval_interval) << task;
    EXPECT_EQ(cfg.glue.eval_batch_size, defaults.eval_batch_size) << task;
    // The printed settings are a complete config: loading them gives the same settings.
    const std::string yaml = glue::describe_task_config(task, "", {});
    EXPECT_EQ(yaml.rfind("# tisa-train glue --task " + task, 0), 0u) << yaml;
    const std::string file = test::make_temp_dir("glue_print_config") + "/" + task + ".yaml";
    fs::write_file_atomic(file, yaml);
    EXPECT_EQ(config::dump_yaml(config::load_config(file)), config::dump_yaml(cfg)) << task;
  }
  // --set wins over the table; a --config file replaces the table's layer (a complete config).
  std::string source;
  auto set = glue::task_config("MRPC", "", {"glue.lr=1e-4", "glue.max_length=64"}, &source).glue;
  EXPECT_EQ(set.lr, 1e-4);
  EXPECT_EQ(set.max_length, 64);
  EXPECT_EQ(set.steps, 800);
  const std::string own = test::make_temp_dir("glue_own_config") + "/own.yaml";
  fs::write_file_atomic(own, "glue:\n  steps: 7\n");
  auto from_file = glue::task_config("MRPC", own, {"glue.batch_size=4"}, &source).glue;
  EXPECT_EQ(source, own);
  EXPECT_EQ(from_file.steps, 7);
  EXPECT_EQ(from_file.batch_size, 4);
  EXPECT_EQ(from_file.lr, defaults.lr);
  // No per-task YAML copies of the table remain to drift from it.
  for (const auto& task : glue::glue_task_names())
    EXPECT_FALSE(test::file_exists(test::source_dir() + "/configs/glue/" + task + ".yaml")) << task;
  // Spot checks against ALBERT's run_glue.sh.
  auto cola = config::config_from_overrides(glue::task_default_overrides("CoLA")).glue;
  EXPECT_DOUBLE_EQ(cola.lr, 1e-5);
  EXPECT_EQ(cola.batch_size, 16);
  EXPECT_EQ(cola.steps, 5336);
  EXPECT_EQ(cola.warmup_steps, 320);
  auto mnli = config::config_from_overrides(glue::task_default_overrides("MNLI")).glue;
  EXPECT_DOUBLE_EQ(mnli.lr, 3e-5);
  EXPECT_EQ(mnli.batch_size, 128);
  EXPECT_EQ(mnli.steps, 10000);
}
