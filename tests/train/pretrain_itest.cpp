// Pretraining end to end on real text: a dataset prepared from WikiText by the built
// `tisa-train prepare pretrain`, the tiny config (configs/pretrain/tiny.yaml). Properties:
//   - resume after an interrupt continues bit-identically (every parameter, torch::equal);
//   - corrupt newer checkpoints are detected and skipped, resume falls back to an older good one
//     and still reproduces the uninterrupted run (a simulated crash);
//   - a differing architecture on resume is an error naming the key;
//   - NaN losses skip updates, and too many in a row stop the run with a clear message;
//   - the loss falls; the run directory holds config.yaml, train.log, metrics.jsonl, final/;
//   - issue 18: a run directory has one owner and a fresh run never replaces a finished one;
//     a resume drops metrics records past its checkpoint; fatal errors reach train.log.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <nlohmann/json.hpp>

#include "common/cpu_features.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/run_directory.h"
#include "common/subprocess.h"
#include "config/config_loader.h"
#include "data/pretrain_dataset.h"
#include "model/tensor_io.h"
#include "support/expect_error.h"
#include "support/test_paths.h"
#include "train/checkpoint.h"
#include "train/pretrainer.h"

namespace {

using namespace tisa;
namespace stdfs = std::filesystem;

constexpr const char* kCorpus = "data/corpus/wikitext-2-raw/wiki.valid.raw";
constexpr const char* kTokenizer = "data/tokenizers/albert-30k-clean.reconstructed.model";

class PretrainITest : public ::testing::Test {
 protected:
  static std::string dataset_;

  static void SetUpTestSuite() {
    if (!test::file_exists(test::shared_path(kCorpus)) || !test::file_exists(test::shared_path(kTokenizer))) return;
    // A dataset prepared beforehand (from the same corpus and tokenizer) may be passed in.
    if (const char* given = std::getenv("TISA_TEST_PRETRAIN_DATASET"); given && *given) {
      dataset_ = given;
      return;
    }
    dataset_ = test::make_temp_dir("pretrain_ds") + "/wiki";
    // Small shards (issue 33): every run, resume and check below reads a dataset of several.
    int rc = run_child({test::bin_dir() + "/tisa-train", "prepare", "pretrain", "--input", test::shared_path(kCorpus),
                        "--tokenizer", test::shared_path(kTokenizer), "--output", dataset_, "--valid-fraction",
                        "0.05", "--threads", "2", "--shard-tokens", "40000"});
    if (rc != 0) dataset_.clear();
  }

  void SetUp() override {
    TISA_REQUIRE_SHARED(kCorpus);
    TISA_REQUIRE_SHARED(kTokenizer);
    ASSERT_FALSE(dataset_.empty()) << "tisa-train prepare pretrain failed (is tisa-text built?)";
  }

  // configs/pretrain/tiny.yaml made smaller: batch 4, 6 steps, checkpoints every 2.
  static config::Config small_run(std::vector<std::string> extra = {}) {
    std::vector<std::string> o = {"data.dataset=" + dataset_, "training.steps=6", "training.batch_size=4",
                                  "training.checkpoint_interval=2", "training.eval_interval=3",
                                  "training.eval_batches=2", "training.keep_checkpoints=10", "training.threads=1",
                                  "training.log_interval=1", "model.hidden_dropout_prob=0.1",
                                  "schedule.warmup_steps=2"};
    o.insert(o.end(), extra.begin(), extra.end());
    return config::load_config(test::source_dir() + "/configs/pretrain/tiny.yaml", o);
  }

  static train::PretrainRunOptions options(const std::string& run_dir) {
    train::PretrainRunOptions opt;
    opt.run_dir = run_dir;
    opt.handle_signals = false;
    opt.show_progress = false;
    return opt;
  }
};
std::string PretrainITest::dataset_;

model::TensorMap load_tensors(const std::string& path) { return model::load_tensor_file(path).tensors; }

void expect_bitwise_equal(const model::TensorMap& a, const model::TensorMap& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (const auto& [name, t] : a) {
    auto it = b.find(name);
    ASSERT_NE(it, b.end()) << what << ": missing " << name;
    EXPECT_TRUE(torch::equal(t, it->second)) << what << ": " << name << " differs";
  }
}

TEST_F(PretrainITest, ResumeAfterInterruptIsBitIdentical) {
  ASSERT_GT(data::read_pretrain_header(dataset_).shards.size(), 2u) << "the resume must cross shards";
  auto cfg = small_run();
  auto full = train::run_pretraining(cfg, options(test::make_temp_dir("run_full")));
  ASSERT_EQ(full.exit_code, kExitOk);
  ASSERT_EQ(full.step, 6);

  const auto dir = test::make_temp_dir("run_split");
  auto first = options(dir);
  first.stop_after_step = 3;  // as if Ctrl-C arrived during update 3
  auto part = train::run_pretraining(cfg, first);
  EXPECT_EQ(part.exit_code, kExitInterrupted);
  EXPECT_EQ(part.step, 3);
  EXPECT_TRUE(part.final_dir.empty());
  EXPECT_TRUE(test::file_exists(dir + "/checkpoints/step-000003/manifest.json"));

  auto second = options(dir);
  second.resume = true;
  auto rest = train::run_pretraining(cfg, second);
  ASSERT_EQ(rest.exit_code, kExitOk);
  EXPECT_EQ(rest.step, 6);
  EXPECT_EQ(rest.train_losses.size(), 3u);
  expect_bitwise_equal(load_tensors(full.final_dir + "/model.safetensors"),
                       load_tensors(rest.final_dir + "/model.safetensors"), "final weights");
  expect_bitwise_equal(load_tensors(full.last_checkpoint + "/optimizer.safetensors"),
                       load_tensors(rest.last_checkpoint + "/optimizer.safetensors"), "optimizer state");
  // The last three losses of the uninterrupted run are the resumed run's losses.
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(full.train_losses[3 + i], rest.train_losses[i]) << "update " << 4 + i;
}

// schedule.total_steps: a run that stops part-way through a longer schedule (a first phase) is a
// finished run, and --resume with training.steps raised to the horizon continues that schedule:
// the weights and optimiser state equal those of the run made in one go. A horizon below the
// run's steps is refused, naming the key.
TEST_F(PretrainITest, RunStoppedPartWayThroughItsScheduleResumesToTheWholeRun) {
  auto full = train::run_pretraining(small_run(), options(test::make_temp_dir("run_whole")));
  ASSERT_EQ(full.exit_code, kExitOk);

  const auto dir = test::make_temp_dir("run_phase");
  auto phase = train::run_pretraining(small_run({"training.steps=3", "schedule.total_steps=6"}), options(dir));
  ASSERT_EQ(phase.exit_code, kExitOk);
  EXPECT_EQ(phase.step, 3);
  EXPECT_FALSE(phase.final_dir.empty()) << "a run stopped at its training.steps is a finished run";

  auto resume = options(dir);
  resume.resume = true;
  auto rest = train::run_pretraining(small_run({"schedule.total_steps=6"}), resume);
  ASSERT_EQ(rest.exit_code, kExitOk);
  EXPECT_EQ(rest.step, 6);
  expect_bitwise_equal(load_tensors(full.final_dir + "/model.safetensors"),
                       load_tensors(rest.final_dir + "/model.safetensors"), "final weights");
  expect_bitwise_equal(load_tensors(full.last_checkpoint + "/optimizer.safetensors"),
                       load_tensors(rest.last_checkpoint + "/optimizer.safetensors"), "optimizer state");
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(full.train_losses[3 + i], rest.train_losses[i]) << "update " << 4 + i;

  // Without the horizon, the same three updates decay to 0 at update 3: another (shorter) schedule.
  auto short_run = train::run_pretraining(small_run({"training.steps=3"}), options(test::make_temp_dir("run_short")));
  ASSERT_EQ(short_run.exit_code, kExitOk);
  const auto shorter = load_tensors(short_run.final_dir + "/model.safetensors");
  const auto phase_weights = load_tensors(phase.final_dir + "/model.safetensors");
  bool any_differs = false;
  for (const auto& [name, t] : shorter) any_differs = any_differs || !torch::equal(t, phase_weights.at(name));
  EXPECT_TRUE(any_differs) << "schedule.total_steps=6 must change the rate of updates 2-3";

  EXPECT_HAS(test::error_of([&] { small_run({"schedule.total_steps=5"}); }), "schedule.total_steps");
}

TEST_F(PretrainITest, CorruptCheckpointsAreSkippedAndResumeFallsBack) {
  auto cfg = small_run();
  auto reference = train::run_pretraining(cfg, options(test::make_temp_dir("run_ref")));
  ASSERT_EQ(reference.exit_code, kExitOk);

  const auto dir = test::make_temp_dir("run_crash");
  auto done = train::run_pretraining(cfg, options(dir));
  ASSERT_EQ(done.exit_code, kExitOk);
  const auto ckpts = dir + "/checkpoints";
  // Simulated crash and disk damage: no final model, the newest checkpoint truncated, the one
  // before it with a flipped bit in the optimizer state.
  stdfs::remove_all(dir + "/final");
  stdfs::resize_file(ckpts + "/step-000006/model.safetensors", 100);
  {
    std::fstream f(ckpts + "/step-000004/optimizer.safetensors", std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-9, std::ios::end);
    char c = 0;
    f.get(c);
    f.seekp(-9, std::ios::end);
    f.put(static_cast<char>(c ^ 0x10));
  }
  try {
    train::verify_checkpoint(ckpts + "/step-000006");
    FAIL() << "truncated checkpoint accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.safetensors has 100 bytes"), std::string::npos) << e.what();
  }
  try {
    train::verify_checkpoint(ckpts + "/step-000004");
    FAIL() << "bit-flipped checkpoint accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("optimizer.safetensors"), std::string::npos) << e.what();
  }
  ASSERT_EQ(train::CheckpointStore(ckpts).latest_valid()->step, 2);

  auto resume = options(dir);
  resume.resume = true;
  auto rest = train::run_pretraining(cfg, resume);
  ASSERT_EQ(rest.exit_code, kExitOk);
  EXPECT_EQ(rest.train_losses.size(), 4u) << "should have resumed from step 2";
  expect_bitwise_equal(load_tensors(reference.final_dir + "/model.safetensors"),
                       load_tensors(rest.final_dir + "/model.safetensors"), "final weights after fallback");
}

TEST_F(PretrainITest, ArchitectureChangeOnResumeIsAnErrorNamingTheKey) {
  const auto dir = test::make_temp_dir("run_arch");
  auto opt = options(dir);
  opt.stop_after_step = 1;
  ASSERT_EQ(train::run_pretraining(small_run(), opt).exit_code, kExitInterrupted);
  auto resume = options(dir);
  resume.resume = true;
  try {
    train::run_pretraining(small_run({"model.num_attention_heads=4"}), resume);
    FAIL() << "expected an architecture error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.num_attention_heads: the checkpoint"), std::string::npos) << e.what();
  }
}

// The validation examples (segmentation, pairs, masking) follow data.valid_seed, not training.seed:
// two pretraining draws are scored on the same examples. The count of masked positions over the
// evaluated batches is their signature (a different valid_seed changes it).
TEST_F(PretrainITest, ValidationExamplesFollowValidSeedNotTheTrainingSeed) {
  auto eval_of = [&](int seed, int valid_seed) {
    auto r = train::run_pretraining(
        small_run({"training.steps=2", "training.eval_batches=6", "training.seed=" + std::to_string(seed),
                   "data.valid_seed=" + std::to_string(valid_seed)}),
        options(test::make_temp_dir("run_valid_seed")));
    EXPECT_EQ(r.exit_code, kExitOk);
    EXPECT_TRUE(r.last_eval.has_value());
    return r.last_eval.value_or(train::EvalResult{});
  };
  const auto a = eval_of(1, 12345), b = eval_of(2, 12345), c = eval_of(1, 7);
  EXPECT_GT(a.examples, 0);
  EXPECT_EQ(a.examples, b.examples);
  EXPECT_EQ(a.predictions, b.predictions) << "validation examples depend on training.seed";
  EXPECT_NE(a.predictions, c.predictions) << "data.valid_seed does not reach the validation examples";
  EXPECT_NE(a.mlm_loss, b.mlm_loss) << "the two training seeds should give two models";
}

// A run whose config.yaml predates data.valid_seed drew its validation examples with its training
// seed: resuming it under another valid_seed is refused, naming the key; stating it resumes.
TEST_F(PretrainITest, ResumeOfARunFromBeforeValidSeedKeepsItsValidationExamples) {
  const auto dir = test::make_temp_dir("run_old_valid");
  auto opt = options(dir);
  opt.stop_after_step = 1;
  ASSERT_EQ(train::run_pretraining(small_run({"training.seed=7"}), opt).exit_code, kExitInterrupted);
  // Rewrite config.yaml as the binary before the key wrote it: no valid_seed line.
  const std::string config_path = dir + "/config.yaml";
  std::ifstream in(config_path);
  std::string line, kept;
  bool dropped = false;
  while (std::getline(in, line)) {
    if (line.find("valid_seed:") != std::string::npos) {
      dropped = true;
      continue;
    }
    kept += line + "\n";
  }
  in.close();
  ASSERT_TRUE(dropped) << "config.yaml does not record data.valid_seed";
  std::ofstream(config_path) << kept;
  auto resume = options(dir);
  resume.resume = true;
  const auto message = test::error_of([&] { train::run_pretraining(small_run({"training.seed=7"}), resume); });
  EXPECT_HAS(message, "data.valid_seed: the run has 7, now 12345");
  EXPECT_EQ(train::run_pretraining(small_run({"training.seed=7", "data.valid_seed=7"}), resume).exit_code, kExitOk);
}

TEST_F(PretrainITest, NanLossSkipsUpdatesAndTooManyStopTheRun) {
  auto opt = options(test::make_temp_dir("run_nan"));
  opt.loss_hook = [](int64_t step, torch::Tensor& loss) {
    if (step == 2) loss = loss * std::nan("");
  };
  auto r = train::run_pretraining(small_run(), opt);
  ASSERT_EQ(r.exit_code, kExitOk);
  ASSERT_EQ(r.train_losses.size(), 6u);
  EXPECT_TRUE(std::isnan(r.train_losses[2]));
  for (size_t i : {0, 1, 3, 4, 5}) EXPECT_TRUE(std::isfinite(r.train_losses[i])) << i;
  EXPECT_NE(fs::read_file(opt.run_dir + "/metrics.jsonl").find("\"event\":\"skipped\""), std::string::npos);

  auto always = options(test::make_temp_dir("run_nan_stop"));
  always.loss_hook = [](int64_t step, torch::Tensor& loss) {
    if (step >= 1) loss = loss * std::numeric_limits<double>::infinity();
  };
  try {
    train::run_pretraining(small_run({"training.max_bad_steps=3"}), always);
    FAIL() << "expected the run to stop";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("stopping at step 4"), std::string::npos) << msg;
    EXPECT_NE(msg.find("training.max_bad_steps"), std::string::npos) << msg;
  }
  // The fatal error is in the run's own log too, not only on the console.
  EXPECT_HAS(test::slurp(always.run_dir + "/train.log"), "stopping at step 4");
}

// Issue 18, classes 1, 2 and 9: the run directory belongs to one live run; a fresh run into a
// finished one is refused and leaves it intact; --overwrite replaces it; --init with --resume and
// a missing directory to resume are errors that say so.
TEST_F(PretrainITest, RunDirectoryIsOwnedAndNeverReplacedSilently) {
  auto cfg = small_run({"training.steps=2", "training.eval_interval=0"});
  const auto dir = test::make_temp_dir("run_owned") + "/run";
  ASSERT_EQ(train::run_pretraining(cfg, options(dir)).exit_code, kExitOk);
  const std::string weights = test::slurp(dir + "/final/model.safetensors");
  ASSERT_FALSE(weights.empty());

  std::string msg = test::error_of([&] { train::run_pretraining(cfg, options(dir)); });
  EXPECT_HAS(msg, dir + " already holds a pretraining run");
  EXPECT_HAS(msg, "--resume");
  EXPECT_HAS(msg, "--overwrite");
  EXPECT_EQ(test::slurp(dir + "/final/model.safetensors"), weights);
  EXPECT_TRUE(test::file_exists(dir + "/checkpoints/step-000002/manifest.json"));

  {  // another live process owns the directory: neither a resume nor an overwrite may write into it
    RunDirectory other(dir, RunDirectory::Start::kContinue);
    auto resume = options(dir);
    resume.resume = true;
    EXPECT_HAS(test::error_of([&] { train::run_pretraining(cfg, resume); }), "is in use by another tisa-train process");
    auto overwrite = options(dir);
    overwrite.overwrite = true;
    EXPECT_HAS(test::error_of([&] { train::run_pretraining(cfg, overwrite); }), "is in use");
    EXPECT_EQ(test::slurp(dir + "/final/model.safetensors"), weights);
  }

  // Resume keeps its word: settings that change the run are refused, listed with both values;
  // the allowed ones (here training.steps) continue it.
  auto resume = options(dir);
  resume.resume = true;
  msg = test::error_of([&] {
    train::run_pretraining(small_run({"training.steps=2", "training.eval_interval=0", "optimizer.type=adamw"}), resume);
  });
  EXPECT_HAS(msg, "--resume continues the run of " + dir + "/config.yaml");
  EXPECT_HAS(msg, "optimizer.type: the run has lamb, now adamw");
  EXPECT_HAS(msg, "settings that may change on resume: training.steps");
  auto longer = train::run_pretraining(small_run({"training.steps=3", "training.eval_interval=0"}), resume);
  EXPECT_EQ(longer.step, 3);

  auto both = options(dir);
  both.resume = true;
  both.init_dir = dir + "/final";
  EXPECT_HAS(test::error_of([&] { train::run_pretraining(cfg, both); }), "cannot be combined with --resume");
  auto missing = options(dir + "-typo");
  missing.resume = true;
  EXPECT_HAS(test::error_of([&] { train::run_pretraining(cfg, missing); }), dir + "-typo does not exist");
  EXPECT_FALSE(test::file_exists(dir + "-typo"));

  auto overwrite = options(dir);
  overwrite.overwrite = true;
  ASSERT_EQ(train::run_pretraining(cfg, overwrite).exit_code, kExitOk);
  EXPECT_FALSE(test::file_exists(dir + "/checkpoints/step-000003"));  // the old run is gone, not mixed in
  EXPECT_TRUE(test::file_exists(dir + "/checkpoints/step-000002/manifest.json"));
}

// Issue 18, class 9: after a crash past the last checkpoint, the resumed run redoes those steps;
// metrics.jsonl must hold each step's records once, not the lost run's and the redone ones.
TEST_F(PretrainITest, ResumeDropsMetricsPastItsCheckpoint) {
  const auto dir = test::make_temp_dir("run_metrics");
  auto cfg = small_run();
  ASSERT_EQ(train::run_pretraining(cfg, options(dir)).exit_code, kExitOk);
  stdfs::remove_all(dir + "/checkpoints/step-000006");  // a crash before the last checkpoint...
  stdfs::remove_all(dir + "/final");
  {
    std::ofstream torn(dir + "/metrics.jsonl", std::ios::app);
    torn << "{\"event\":\"train\",\"st";  // ...cut a record short
  }
  auto resume = options(dir);
  resume.resume = true;
  ASSERT_EQ(train::run_pretraining(cfg, resume).exit_code, kExitOk);
  std::map<int64_t, int> train_records;
  std::istringstream in(test::slurp(dir + "/metrics.jsonl"));
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);  // every line is whole JSON
    if (j["event"] == "train") ++train_records[j["step"].get<int64_t>()];
  }
  EXPECT_EQ(train_records, (std::map<int64_t, int>{{1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}}));
}

TEST_F(PretrainITest, LossFallsAndRunDirectoryIsComplete) {
  auto cfg = small_run({"training.steps=60", "training.batch_size=8", "training.eval_interval=30",
                        "training.eval_batches=4", "training.checkpoint_interval=30", "training.keep_checkpoints=1",
                        "training.log_interval=10", "model.hidden_dropout_prob=0.0"});
  const auto dir = test::make_temp_dir("run_loss");
  auto r = train::run_pretraining(cfg, options(dir));
  ASSERT_EQ(r.exit_code, kExitOk);
  ASSERT_EQ(r.train_losses.size(), 60u);
  double first = 0, last = 0;
  for (int i = 0; i < 5; ++i) first += r.train_losses[static_cast<size_t>(i)] / 5;
  for (int i = 55; i < 60; ++i) last += r.train_losses[static_cast<size_t>(i)] / 5;
  EXPECT_LT(last, first - 2.0) << "first 5 updates " << first << ", last 5 " << last;
  ASSERT_TRUE(r.last_eval.has_value());
  EXPECT_LT(r.last_eval->mlm_loss, std::log(30000.0) - 2.0);
  EXPECT_GT(r.last_eval->examples, 0);

  for (const char* f : {"config.yaml", "train.log", "metrics.jsonl", "final/config.json", "final/model.safetensors",
                        "final/spiece.model"})
    EXPECT_TRUE(test::file_exists(dir + "/" + f)) << f;
  // Retention: the last checkpoint (60) and the best (lowest eval MLM loss; 60 too, or 30).
  auto kept = train::CheckpointStore(dir + "/checkpoints").list();
  EXPECT_GE(kept.size(), 1u);
  EXPECT_LE(kept.size(), 2u);
  EXPECT_EQ(kept.back().step, 60);
  // metrics.jsonl: train events with the documented fields, eval events.
  std::ifstream in(dir + "/metrics.jsonl");
  std::string line;
  int train_events = 0, eval_events = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    if (j["event"] == "train") {
      ++train_events;
      for (const char* k : {"loss", "mlm_loss", "sop_loss", "lr", "grad_norm", "tokens_per_s"})
        EXPECT_TRUE(j.contains(k)) << k;
    }
    if (j["event"] == "eval") {
      ++eval_events;
      for (const char* k : {"mlm_loss", "mlm_accuracy", "sop_loss", "sop_accuracy"}) EXPECT_TRUE(j.contains(k)) << k;
    }
  }
  EXPECT_EQ(train_events, 6);
  EXPECT_EQ(eval_events, 2);
  // The resolved config loads back to the same run settings.
  auto back = config::load_config(dir + "/config.yaml");
  EXPECT_EQ(back.training.steps, 60);
  EXPECT_EQ(back.model.hidden_size, cfg.model.hidden_size);
}

TEST_F(PretrainITest, CommandLineRunAndResume) {
  const auto dir = test::make_temp_dir("run_cli") + "/run";
  const std::string exe = test::bin_dir() + "/tisa-train";
  std::vector<std::string> argv = {exe, "pretrain", "--config", test::source_dir() + "/configs/pretrain/tiny.yaml",
                                   "--set", "data.dataset=" + dataset_, "--set", "training.steps=4",
                                   "--set", "training.batch_size=4", "--set", "training.threads=1",
                                   "--set", "schedule.warmup_steps=2",
                                   "--run-dir", dir};
  ASSERT_EQ(run_child(argv), 0);
  EXPECT_TRUE(test::file_exists(dir + "/final/model.safetensors"));
  EXPECT_TRUE(test::file_exists(dir + "/checkpoints/step-000004/manifest.json"));
  // The same command again is refused (exit 1): it would replace the finished run.
  EXPECT_EQ(run_child(argv), 1);
  EXPECT_TRUE(test::file_exists(dir + "/final/model.safetensors"));
  // --resume with --init or --overwrite is a usage error (exit 2).
  EXPECT_EQ(run_child({exe, "pretrain", "--run-dir", dir, "--resume", "--init", dir + "/final"}), 2);
  EXPECT_EQ(run_child({exe, "pretrain", "--run-dir", dir, "--resume", "--overwrite"}), 2);
  // Resuming a finished run is allowed (nothing left to do) and takes the run's own config.
  ASSERT_EQ(run_child({exe, "pretrain", "--run-dir", dir, "--resume"}), 0);
  // A differing architecture is refused with exit code 1.
  EXPECT_EQ(run_child({exe, "pretrain", "--run-dir", dir, "--resume", "--set", "model.hidden_size=128"}), 1);
}

}  // namespace

// training.precision: auto is resolved once, from this machine's CPU, and config.yaml records the
// result, so that a resumed run on the same machine continues with the same precision.
namespace {
TEST_F(PretrainITest, PrecisionAutoIsResolvedAndRecorded) {
  const auto dir = test::make_temp_dir("run_auto_precision");
  auto cfg = small_run({"training.precision=auto", "training.steps=2", "training.eval_interval=0"});
  ASSERT_EQ(train::run_pretraining(cfg, options(dir)).exit_code, kExitOk);
  const auto expected = cpu_bf16_support().fast_products ? config::Precision::kBf16 : config::Precision::kFp32;
  EXPECT_EQ(config::load_config(dir + "/config.yaml").training.precision, expected);
  auto resume = options(dir);
  resume.resume = true;
  auto longer = train::run_pretraining(
      small_run({"training.precision=auto", "training.steps=3", "training.eval_interval=0"}), resume);
  EXPECT_EQ(longer.step, 3);
}
}  // namespace
