// Checkpoint folders: atomic save, manifest verification (truncation, bit flips, missing
// manifest), newest-valid selection with fallback, retention, and training-state round trips.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "common/fs.h"
#include "support/test_paths.h"
#include "train/checkpoint.h"
#include "train/training_state.h"

namespace {

using tisa::train::CheckpointStore;
namespace stdfs = std::filesystem;

// A payload of two files whose content depends on the step.
void write_payload(const std::string& dir, int64_t step) {
  tisa::fs::write_file_atomic(dir + "/model.safetensors", std::string(1000 + static_cast<size_t>(step), 'w'));
  tisa::fs::write_file_atomic(dir + "/training_state.json", "{\"step\": " + std::to_string(step) + "}");
}

std::string expect_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const tisa::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected tisa::Error";
  return "";
}

TEST(CheckpointTest, SaveWritesManifestAndVerifies) {
  CheckpointStore store(tisa::test::make_temp_dir("ckpt") + "/checkpoints");
  auto path = store.save(100, [](const std::string& d) { write_payload(d, 100); });
  EXPECT_EQ(stdfs::path(path).filename().string(), "step-000100");
  EXPECT_TRUE(tisa::fs::exists(path + "/manifest.json"));
  EXPECT_NO_THROW(tisa::train::verify_checkpoint(path));
  // No temporary folder is left behind.
  int entries = 0;
  for (auto& e : stdfs::directory_iterator(store.dir())) { (void)e; ++entries; }
  EXPECT_EQ(entries, 1);
}

TEST(CheckpointTest, TruncatedFileIsRefusedWithClearError) {
  CheckpointStore store(tisa::test::make_temp_dir("ckpt") + "/checkpoints");
  auto path = store.save(5, [](const std::string& d) { write_payload(d, 5); });
  stdfs::resize_file(path + "/model.safetensors", 500);
  auto msg = expect_error([&] { tisa::train::verify_checkpoint(path); });
  EXPECT_NE(msg.find("model.safetensors"), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  EXPECT_NE(msg.find("step-000005"), std::string::npos) << msg;
}

TEST(CheckpointTest, BitFlipIsRefusedWithClearError) {
  CheckpointStore store(tisa::test::make_temp_dir("ckpt") + "/checkpoints");
  auto path = store.save(7, [](const std::string& d) { write_payload(d, 7); });
  {
    std::fstream f(path + "/model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(123);
    f.put('w' ^ 0x01);
  }
  auto msg = expect_error([&] { tisa::train::verify_checkpoint(path); });
  EXPECT_NE(msg.find("hash of model.safetensors"), std::string::npos) << msg;
}

TEST(CheckpointTest, MissingManifestMeansIncomplete) {
  CheckpointStore store(tisa::test::make_temp_dir("ckpt") + "/checkpoints");
  auto path = store.save(3, [](const std::string& d) { write_payload(d, 3); });
  stdfs::remove(path + "/manifest.json");
  auto msg = expect_error([&] { tisa::train::verify_checkpoint(path); });
  EXPECT_NE(msg.find("incomplete"), std::string::npos) << msg;
}

TEST(CheckpointTest, LatestValidSkipsCorruptNewerOnes) {
  CheckpointStore store(tisa::test::make_temp_dir("ckpt") + "/checkpoints");
  for (int64_t s : {10, 20, 30}) store.save(s, [s](const std::string& d) { write_payload(d, s); });
  ASSERT_EQ(store.latest_valid()->step, 30);
  stdfs::resize_file(store.dir() + "/step-000030/model.safetensors", 10);
  ASSERT_EQ(store.latest_valid()->step, 20);
  tisa::fs::write_file_atomic(store.dir() + "/step-000020/training_state.json", "{\"step\": 99}");
  ASSERT_EQ(store.latest_valid()->step, 10);
  stdfs::remove(store.dir() + "/step-000010/manifest.json");
  EXPECT_FALSE(store.latest_valid().has_value());
}

TEST(CheckpointTest, FailedPayloadLeavesNothing) {
  CheckpointStore store(tisa::test::make_temp_dir("ckpt") + "/checkpoints");
  EXPECT_THROW(store.save(1, [](const std::string&) { throw tisa::Error("disk full"); }), tisa::Error);
  EXPECT_TRUE(store.list().empty());
  EXPECT_TRUE(stdfs::is_empty(store.dir()));
}

TEST(CheckpointTest, PruneKeepsLastKPlusBest) {
  CheckpointStore store(tisa::test::make_temp_dir("ckpt") + "/checkpoints");
  for (int64_t s = 1; s <= 6; ++s) store.save(s, [s](const std::string& d) { write_payload(d, s); });
  stdfs::create_directories(store.dir() + "/.tmp-step-7-123");  // leftover of a killed save
  store.prune(2, 2);
  std::vector<int64_t> steps;
  for (const auto& c : store.list()) steps.push_back(c.step);
  EXPECT_EQ(steps, (std::vector<int64_t>{2, 5, 6}));
  EXPECT_FALSE(tisa::fs::exists(store.dir() + "/.tmp-step-7-123"));
}

TEST(CheckpointTest, ResaveOfSameStepReplaces) {
  CheckpointStore store(tisa::test::make_temp_dir("ckpt") + "/checkpoints");
  store.save(4, [](const std::string& d) { write_payload(d, 4); });
  auto path = store.save(4, [](const std::string& d) { write_payload(d, 40); });
  EXPECT_NO_THROW(tisa::train::verify_checkpoint(path));
  EXPECT_EQ(stdfs::file_size(path + "/model.safetensors"), 1040u);
}

TEST(TrainingStateTest, JsonRoundTripAndRngRestore) {
  tisa::train::TrainingState s;
  s.step = 42;
  s.tokens_seen = 1234;
  s.data_position = {{"epoch", 1}, {"index", 17}};
  s.consecutive_bad_steps = 2;
  s.skipped_steps = 3;
  s.last_eval_mlm_loss = 2.5;
  s.best_eval_mlm_loss = 2.25;
  s.best_step = 40;
  s.schedule = "albert_poly";
  s.lr = 1e-3;
  torch::manual_seed(7);
  tisa::train::capture_rng(s, /*cuda=*/false);
  auto expected = torch::rand({5});
  auto path = tisa::test::make_temp_dir("state") + "/training_state.json";
  tisa::train::save_training_state(s, path);
  auto back = tisa::train::load_training_state(path);
  EXPECT_EQ(back.step, 42);
  EXPECT_EQ(back.tokens_seen, 1234);
  EXPECT_EQ(back.data_position, s.data_position);
  EXPECT_EQ(back.consecutive_bad_steps, 2);
  EXPECT_EQ(back.skipped_steps, 3);
  EXPECT_EQ(back.last_eval_mlm_loss, 2.5);
  EXPECT_EQ(back.best_eval_mlm_loss, 2.25);
  EXPECT_EQ(back.best_step, 40);
  EXPECT_EQ(back.schedule, "albert_poly");
  torch::manual_seed(99);
  tisa::train::restore_rng(back, false);
  EXPECT_TRUE(torch::equal(torch::rand({5}), expected));
}

TEST(TrainingStateTest, MissingKeyIsNamed) {
  nlohmann::json j = {{"format", "tisa-train training state"}, {"version", 1}};
  auto msg = expect_error([&] { tisa::train::training_state_from_json(j, "x/training_state.json"); });
  EXPECT_NE(msg.find("'step'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("x/training_state.json"), std::string::npos) << msg;
}

}  // namespace
