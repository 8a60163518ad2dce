// Issue 35 end to end: `pretrain` and `glue` write TensorBoard event files that the `tensorboard`
// package's own reader (tests/tensorboard/read_events.py: EventAccumulator and the raw event
// file loader) reads back with every scalar of metrics.jsonl (tags, steps, float32 values), the
// config text and the hparams session, the same Experiment for both kinds of run:
//   - a pretraining and a two-seed GLUE fine-tuning of its model; training.tensorboard=false
//     writes none;
//   - a pretraining read while it runs, killed with SIGKILL (whole records only), its file then
//     cut mid-record by hand (the reader keeps what came before), and resumed: each step once in
//     the files, the killed run's steps past the checkpoint superseded, a new events file;
//   - the same SIGKILL and resume for a GLUE seed.
// Needs a Python with `tensorboard` (scripts/requirements-torch2.txt; $TISA_PYTHON or the 2.x
// venv); skips saying so without one (the LibTorch 1.13 pass).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/fs.h"
#include "support/child_process.h"
#include "support/test_paths.h"

extern char** environ;

namespace {

namespace stdfs = std::filesystem;
using nlohmann::json;
using tisa::test::bin_dir;
using tisa::test::source_dir;

std::string reader_script() { return source_dir() + "/tests/tensorboard/read_events.py"; }

// Why read_events.py cannot run here ("" when it can); checked once.
const std::string& tensorboard_problem() {
  static const std::string problem = [] {
    const std::string py = tisa::test::hf_python();
    if (py.empty() || !tisa::test::file_exists(py))
      return "no Python with the tensorboard package: set TISA_PYTHON or create ~/.cache/tisa-train/venv-torch2 "
             "from scripts/requirements-torch2.txt (looked for '" + py + "')";
    const std::string log = tisa::test::make_temp_dir("tb_py_check") + "/log.txt";
    if (tisa::test::run("'" + py + "' '" + reader_script() + "' check > '" + log + "' 2>&1") != 0)
      return "'" + py + "' cannot import tensorboard (pip install -r scripts/requirements-torch2.txt): " +
             tisa::test::slurp(log);
    return std::string();
  }();
  return problem;
}

#define REQUIRE_TENSORBOARD()                                                   \
  do {                                                                          \
    if (!tensorboard_problem().empty()) GTEST_SKIP() << tensorboard_problem();  \
  } while (0)

// Runs read_events.py on `run_dir` (`flags`: --expect-end, --subset); "" when it found nothing
// wrong, else its report. Writes what it read to `summary` when given.
std::string read_back(const std::string& run_dir, const std::string& kind, const std::string& flags,
                      const std::string& summary = "") {
  const std::string log = tisa::test::make_temp_dir("tb_read") + "/log.txt";
  const std::string cmd = "'" + tisa::test::hf_python() + "' '" + reader_script() + "' run '" + run_dir + "' --kind " +
                          kind + " " + flags + (summary.empty() ? "" : " --summary '" + summary + "'") + " > '" +
                          log + "' 2>&1";
  if (tisa::test::run(cmd) == 0) return "";
  return cmd + "\n" + tisa::test::slurp(log);
}

json read_json(const std::string& path) { return json::parse(tisa::fs::read_file(path)); }

// `tisa-train <args>`, output into `log`; returns the exit code.
int tisa_train(const std::string& args, const std::string& log) {
  return tisa::test::run("OMP_WAIT_POLICY=PASSIVE " + bin_dir() + "/tisa-train " + args + " > '" + log + "' 2>&1");
}

// Starts `tisa-train <args>` in the background (tisa::test::start_tisa_train).
pid_t start_tisa_train(const std::string& args, const std::string& log) {
  return tisa::test::start_tisa_train(tisa::test::split_words(args), log);
}
using tisa::test::wait_for_checkpoint;

int kill_and_wait(pid_t pid) {
  ::kill(pid, SIGKILL);
  return tisa::test::wait_exit(pid);
}

std::vector<std::string> event_files(const std::string& dir) {
  std::vector<std::string> files;
  if (stdfs::is_directory(dir))
    for (const auto& e : stdfs::directory_iterator(dir))
      if (e.path().filename().string().rfind("events.out.tfevents.", 0) == 0) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

class TensorBoardITest : public ::testing::Test {
 protected:
  static std::string tmp_, dataset_;
  // A SentencePiece tokenizer and a pretraining dataset from the bundled sample corpus.
  static void SetUpTestSuite() {
    tmp_ = tisa::test::make_temp_dir("tb_itest");
    const std::string corpus = source_dir() + "/data/sample/corpus";
    if (tisa_train("tokenizer train --type sentencepiece --vocab-size 1000 --input " + corpus + "/alice.txt --output " +
                       tmp_ + "/tok",
                   tmp_ + "/tok.log") != 0 ||
        tisa_train("prepare pretrain --input " + corpus + "/wiki.valid.raw --tokenizer " + tmp_ + "/tok --output " +
                       tmp_ + "/ds --valid-fraction 0.05 --threads 1",
                   tmp_ + "/ds.log") != 0)
      dataset_.clear();
    else
      dataset_ = tmp_ + "/ds";
  }
  void SetUp() override {
    REQUIRE_TENSORBOARD();
    ASSERT_FALSE(dataset_.empty()) << "tokenizer train / prepare pretrain failed; see " << tmp_;
  }

  // `pretrain` arguments of the tiny run (configs/pretrain/tiny.yaml) with `steps` updates.
  static std::string pretrain_args(const std::string& run_dir, int steps, int checkpoint_interval) {
    return "pretrain --config " + source_dir() + "/configs/pretrain/tiny.yaml --run-dir " + run_dir +
           " --set data.dataset=" + dataset_ + " --set model.vocab_size=1000 --set data.max_seq_length=32" +
           " --set data.max_predictions_per_seq=5 --set data.workers=1 --set training.batch_size=4" +
           " --set training.steps=" + std::to_string(steps) + " --set schedule.warmup_steps=1" +
           " --set training.log_interval=1" +
           " --set training.eval_interval=6 --set training.eval_batches=2 --set training.checkpoint_interval=" +
           std::to_string(checkpoint_interval) + " --set training.threads=1";
  }
  static std::string glue_args(const std::string& init, const std::string& run_dir, const std::string& seeds,
                               int steps) {
    return "glue --task SST-2 --data-dir " + source_dir() + "/data/sample/glue --init " + init + " --seeds " + seeds +
           " --run-dir " + run_dir + " --set glue.steps=" + std::to_string(steps) +
           " --set glue.batch_size=8 --set glue.max_length=32 --set glue.eval_interval=4 --set glue.warmup_steps=2" +
           " --set training.log_interval=1 --set training.threads=1 --set training.checkpoint_interval=4";
  }
};
std::string TensorBoardITest::tmp_;
std::string TensorBoardITest::dataset_;

TEST_F(TensorBoardITest, PretrainingAndGlueOpenInTensorBoard) {
  const std::string pre = tmp_ + "/pre";
  ASSERT_EQ(tisa_train(pretrain_args(pre, 12, 6), tmp_ + "/pre.log"), 0) << tisa::fs::read_file(tmp_ + "/pre.log");
  ASSERT_EQ(event_files(pre + "/tensorboard").size(), 1u);
  EXPECT_EQ(read_back(pre, "pretrain", "--expect-end", tmp_ + "/pre.json"), "");
  const json p = read_json(tmp_ + "/pre.json");
  for (const char* tag : {"train/loss", "train/mlm_loss", "train/sop_loss", "train/lr", "train/grad_norm",
                          "train/tokens_per_s", "eval/mlm_accuracy", "eval/mlm_loss", "analysis/tau_gram",
                          "final/mlm_accuracy"})
    EXPECT_TRUE(p["scalars"].contains(tag)) << tag;
  EXPECT_EQ(p["scalars"]["train/loss"].size(), 12u);
  EXPECT_EQ(p["scalars"]["eval/mlm_accuracy"], json({6, 12}));
  EXPECT_EQ(p["hparams"]["run.kind"], "pretrain");
  EXPECT_EQ(p["hparams"]["training.steps"], 12.0);
  EXPECT_EQ(p["hparams"]["model.position.relative"], "none");

  const std::string glue = tmp_ + "/glue";
  ASSERT_EQ(tisa_train(glue_args(pre + "/final", glue, "1,2", 8), tmp_ + "/glue.log"), 0)
      << tisa::fs::read_file(tmp_ + "/glue.log");
  for (const char* seed : {"1", "2"}) {
    const std::string dir = glue + "/SST-2/seed-" + seed;
    ASSERT_EQ(event_files(dir + "/tensorboard").size(), 1u) << dir;
    EXPECT_EQ(read_back(dir, "glue", "--expect-end", tmp_ + "/glue" + seed + ".json"), "");
    const json g = read_json(tmp_ + "/glue" + seed + ".json");
    for (const char* tag : {"train/loss", "train/lr", "train/grad_norm", "glue/acc", "final/acc"})
      EXPECT_TRUE(g["scalars"].contains(tag)) << tag;
    EXPECT_EQ(g["scalars"]["glue/acc"], json({4, 8}));
    EXPECT_EQ(g["hparams"]["run.kind"], "glue");
    EXPECT_EQ(g["hparams"]["training.seed"], std::stod(seed));
    EXPECT_EQ(g["hparams"]["model.vocab_size"], 1000.0);  // the --init model's, not the config's default
    // One HPARAMS table for both kinds: TensorBoard takes the first Experiment it finds.
    EXPECT_EQ(g["experiment_hparams"], p["experiment_hparams"]);
    EXPECT_EQ(g["experiment_metrics"], p["experiment_metrics"]);
  }

  const std::string off = tmp_ + "/off";
  ASSERT_EQ(tisa_train(pretrain_args(off, 2, 0) + " --set training.tensorboard=false", tmp_ + "/off.log"), 0)
      << tisa::fs::read_file(tmp_ + "/off.log");
  EXPECT_TRUE(tisa::test::file_exists(off + "/metrics.jsonl"));
  EXPECT_FALSE(stdfs::exists(off + "/tensorboard"));
}

TEST_F(TensorBoardITest, LiveKilledTornAndResumedPretraining) {
  const std::string dir = tmp_ + "/killed";
  const std::string args = pretrain_args(dir, 400, 5);
  const pid_t pid = start_tisa_train(args, tmp_ + "/killed1.log");
  ASSERT_TRUE(wait_for_checkpoint(dir + "/checkpoints")) << tisa::fs::read_file(tmp_ + "/killed1.log");
  EXPECT_EQ(read_back(dir, "pretrain", "--subset"), "") << "read while the run writes";
  const int rc = kill_and_wait(pid);
  ASSERT_EQ(rc, 128 + SIGKILL) << "the run ended before the signal\n" << tisa::fs::read_file(tmp_ + "/killed1.log");
  EXPECT_EQ(read_back(dir, "pretrain", "--subset", tmp_ + "/killed.json"), "") << "after SIGKILL";
  const auto files = event_files(dir + "/tensorboard");
  ASSERT_EQ(files.size(), 1u);

  // A crash inside a write (power loss, a full disk): the last record cut in the middle.
  const std::string bytes = tisa::fs::read_file(files[0]);
  tisa::fs::write_file_atomic(files[0], bytes.substr(0, bytes.size() - 7));
  EXPECT_EQ(read_back(dir, "pretrain", "--subset", tmp_ + "/torn.json"), "") << "a torn last record";
  EXPECT_EQ(read_json(tmp_ + "/torn.json")["records"].get<int>() + 1, read_json(tmp_ + "/killed.json")["records"]);

  // Resume, to a few steps past the newest checkpoint: those steps are redone and written once.
  int newest = 0;
  for (const auto& e : stdfs::directory_iterator(dir + "/checkpoints"))
    if (e.path().filename().string().rfind("step-", 0) == 0 && stdfs::exists(e.path() / "manifest.json"))
      newest = std::max(newest, std::stoi(e.path().filename().string().substr(5)));
  ASSERT_GT(newest, 0);
  const int end = newest + 9;
  ASSERT_NE(tisa_train(pretrain_args(dir, newest - 1, 5) + " --resume", tmp_ + "/short.log"), 0);
  EXPECT_NE(tisa::fs::read_file(tmp_ + "/short.log").find("is below the step of the checkpoint to resume"),
            std::string::npos)
      << tisa::fs::read_file(tmp_ + "/short.log");
  ASSERT_EQ(tisa_train(pretrain_args(dir, end, 5) + " --resume", tmp_ + "/killed2.log"), 0)
      << tisa::fs::read_file(tmp_ + "/killed2.log");
  EXPECT_EQ(read_back(dir, "pretrain", "--expect-end", tmp_ + "/resumed.json"), "");
  const json r = read_json(tmp_ + "/resumed.json");
  EXPECT_EQ(r["files"].size(), 2u) << "a resume starts a new events file";
  std::vector<int> steps(static_cast<size_t>(end));
  for (int i = 0; i < end; ++i) steps[static_cast<size_t>(i)] = i + 1;
  EXPECT_EQ(r["scalars"]["train/loss"], json(steps));
  EXPECT_EQ(r["hparams"]["training.steps"], static_cast<double>(end)) << "the resumed run's settings";
}

TEST_F(TensorBoardITest, KilledAndResumedGlueSeed) {
  const std::string pre = tmp_ + "/glue_init";
  ASSERT_EQ(tisa_train(pretrain_args(pre, 2, 0), tmp_ + "/glue_init.log"), 0)
      << tisa::fs::read_file(tmp_ + "/glue_init.log");
  const std::string dir = tmp_ + "/glue_killed";
  const std::string seed = dir + "/SST-2/seed-3";
  const pid_t pid = start_tisa_train(glue_args(pre + "/final", dir, "3", 120), tmp_ + "/glue_killed1.log");
  ASSERT_TRUE(wait_for_checkpoint(seed + "/checkpoints")) << tisa::fs::read_file(tmp_ + "/glue_killed1.log");
  ASSERT_EQ(kill_and_wait(pid), 128 + SIGKILL) << tisa::fs::read_file(tmp_ + "/glue_killed1.log");
  EXPECT_EQ(read_back(seed, "glue", "--subset"), "") << "after SIGKILL";
  ASSERT_EQ(tisa_train(glue_args(pre + "/final", dir, "3", 120) + " --resume", tmp_ + "/glue_killed2.log"), 0)
      << tisa::fs::read_file(tmp_ + "/glue_killed2.log");
  EXPECT_EQ(read_back(seed, "glue", "--expect-end", tmp_ + "/glue_resumed.json"), "");
  const json r = read_json(tmp_ + "/glue_resumed.json");
  EXPECT_EQ(r["files"].size(), 2u);
  EXPECT_EQ(r["scalars"]["train/loss"].size(), 120u);
  EXPECT_EQ(r["scalars"]["glue/acc"].size(), 30u);
}

}  // namespace
