// Issue 36, point 1: every hand-over compares identities, through the real commands. A pretraining
// resumed on re-prepared data, a model folder whose spiece.model was replaced (glue --init) and
// eval-mlm on a dataset of another tokenizer are refused naming both identities; the same data in
// another folder resumes.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "common/fs.h"
#include "support/test_paths.h"

namespace {

namespace stdfs = std::filesystem;
using tisa::test::bin_dir;
using tisa::test::source_dir;

int tisa_train(const std::string& args, const std::string& log) {
  return tisa::test::run("OMP_WAIT_POLICY=PASSIVE " + bin_dir() + "/tisa-train " + args + " > '" + log + "' 2>&1");
}

class IdentityITest : public ::testing::Test {
 protected:
  std::string tmp_ = tisa::test::make_temp_dir("identity_itest");
  std::string corpus_ = source_dir() + "/data/sample/corpus";

  void tokenizer(const std::string& text, const std::string& out) {
    ASSERT_EQ(tisa_train("tokenizer train --type sentencepiece --vocab-size 1000 --input " + corpus_ + "/" + text +
                             " --output " + out,
                         out + ".log"),
              0)
        << tisa::fs::read_file(out + ".log");
  }
  void prepare(const std::string& text, const std::string& tok, const std::string& out) {
    ASSERT_EQ(tisa_train("prepare pretrain --input " + corpus_ + "/" + text + " --tokenizer " + tok + " --output " +
                             out + " --valid-fraction 0.05 --threads 1",
                         out + ".log"),
              0)
        << tisa::fs::read_file(out + ".log");
  }
  std::string pretrain_args(const std::string& run_dir, const std::string& dataset, int steps) {
    return "pretrain --config " + source_dir() + "/configs/pretrain/tiny.yaml --run-dir " + run_dir +
           " --set data.dataset=" + dataset + " --set model.vocab_size=1000 --set data.max_seq_length=32" +
           " --set data.max_predictions_per_seq=5 --set data.workers=1 --set training.batch_size=4" +
           " --set training.steps=" + std::to_string(steps) + " --set schedule.warmup_steps=1" +
           " --set training.eval_interval=2 --set training.eval_batches=1 --set training.checkpoint_interval=2" +
           " --set training.threads=1";
  }
};

TEST_F(IdentityITest, EveryHandOverComparesIdentities) {
  const std::string tok = tmp_ + "/tok", other_tok = tmp_ + "/other_tok";
  tokenizer("alice.txt", tok);
  tokenizer("pride_and_prejudice.txt", other_tok);
  const std::string ds = tmp_ + "/ds", moved = tmp_ + "/moved";
  prepare("wiki.valid.raw", tok, ds);
  prepare("wiki.valid.raw", tok, moved);  // the same content in another folder
  const auto identity = [](const std::string& dir) {
    return nlohmann::json::parse(tisa::fs::read_file(dir + "/header.json"))["identity"].get<std::string>();
  };
  EXPECT_EQ(identity(ds), identity(moved));

  const std::string run = tmp_ + "/run";
  ASSERT_EQ(tisa_train(pretrain_args(run, ds, 2), tmp_ + "/pre1.log"), 0) << tisa::fs::read_file(tmp_ + "/pre1.log");
  EXPECT_NE(tisa::fs::read_file(run + "/config.yaml").find(identity(ds)), std::string::npos) << "recorded";
  ASSERT_TRUE(tisa::test::file_exists(run + "/final/tisa_identity.json"));

  // Pretraining resumed on the same data, moved: accepted.
  ASSERT_EQ(tisa_train(pretrain_args(run, moved, 4) + " --resume", tmp_ + "/pre2.log"), 0)
      << tisa::fs::read_file(tmp_ + "/pre2.log");
  // ... on the folder re-prepared from another corpus: refused, naming both identities.
  prepare("alice.txt", tok, moved);
  ASSERT_NE(tisa_train(pretrain_args(run, moved, 6) + " --resume", tmp_ + "/pre3.log"), 0);
  const std::string refused = tisa::fs::read_file(tmp_ + "/pre3.log");
  EXPECT_NE(refused.find("--resume: the dataset " + moved + " is " + identity(moved) + ", but the run in " + run +
                         " was trained on " + identity(ds)),
            std::string::npos)
      << refused;

  // A header whose tokenizer identity was edited: refused before training.
  {
    auto j = nlohmann::json::parse(tisa::fs::read_file(moved + "/header.json"));
    j["tokenizer"]["identity"] = "sentencepiece-0000000000000000-cased";
    tisa::fs::write_file_atomic(moved + "/header.json", j.dump());
  }
  ASSERT_NE(tisa_train(pretrain_args(tmp_ + "/run_edited", moved, 2), tmp_ + "/pre4.log"), 0);
  EXPECT_NE(tisa::fs::read_file(tmp_ + "/pre4.log").find("header.json was edited after preparation"),
            std::string::npos)
      << tisa::fs::read_file(tmp_ + "/pre4.log");

  // eval-mlm of the model on a dataset made with another tokenizer: refused.
  const std::string foreign = tmp_ + "/foreign";
  prepare("wiki.valid.raw", other_tok, foreign);
  ASSERT_NE(tisa_train("eval-mlm --model " + run + "/final --dataset " + foreign + " --seq-lengths 32 --max-batches 1",
                       tmp_ + "/evalmlm.log"),
            0);
  EXPECT_NE(tisa::fs::read_file(tmp_ + "/evalmlm.log").find("was tokenised with"), std::string::npos)
      << tisa::fs::read_file(tmp_ + "/evalmlm.log");
  ASSERT_EQ(tisa_train("eval-mlm --model " + run + "/final --dataset " + ds + " --seq-lengths 32 --max-batches 1" +
                           " --output " + tmp_ + "/length.json",
                       tmp_ + "/evalmlm_ok.log"),
            0)
      << tisa::fs::read_file(tmp_ + "/evalmlm_ok.log");
  // Issue 31: eval-mlm masks as the run pretrained (its data.masked_lm_prob and data.max_ngram,
  // recorded with the model) unless a flag changes it, and says which it used.
  {
    const auto record = nlohmann::json::parse(tisa::fs::read_file(run + "/final/tisa_identity.json"))["masking"];
    const std::string run_config = tisa::fs::read_file(run + "/config.yaml");
    EXPECT_NE(run_config.find("max_ngram: " + std::to_string(record["max_ngram"].get<int64_t>())), std::string::npos)
        << record.dump() << "\n" << run_config;
    const auto length = nlohmann::json::parse(tisa::fs::read_file(tmp_ + "/length.json"));
    EXPECT_EQ(length["masked_lm_prob"], record["masked_lm_prob"]);
    EXPECT_EQ(length["max_ngram"], record["max_ngram"]);
    EXPECT_EQ(length["masking_from"], "model");
    ASSERT_EQ(tisa_train("eval-mlm --model " + run + "/final --dataset " + ds + " --seq-lengths 32 --max-batches 1" +
                             " --max-ngram 1 --output " + tmp_ + "/length1.json",
                         tmp_ + "/evalmlm_flag.log"),
              0)
        << tisa::fs::read_file(tmp_ + "/evalmlm_flag.log");
    const auto flagged = nlohmann::json::parse(tisa::fs::read_file(tmp_ + "/length1.json"));
    EXPECT_EQ(flagged["max_ngram"], 1);
    EXPECT_EQ(flagged["masked_lm_prob"], record["masked_lm_prob"]);
    EXPECT_EQ(flagged["masking_from"], "model+flags");
  }

  // glue --init of a model folder whose spiece.model was replaced by another tokenizer: refused.
  const std::string swapped = tmp_ + "/swapped";
  stdfs::copy(run + "/final", swapped, stdfs::copy_options::recursive);
  stdfs::copy_file(other_tok + "/spiece.model", swapped + "/spiece.model", stdfs::copy_options::overwrite_existing);
  ASSERT_NE(tisa_train("glue --task SST-2 --data-dir " + source_dir() + "/data/sample/glue --init " + swapped +
                           " --run-dir " + tmp_ + "/glue --set glue.steps=2 --set glue.max_length=32" +
                           " --set training.threads=1",
                       tmp_ + "/glue.log"),
            0);
  EXPECT_NE(tisa::fs::read_file(tmp_ + "/glue.log").find("is not the tokenizer this model was trained with"),
            std::string::npos)
      << tisa::fs::read_file(tmp_ + "/glue.log");
}

}  // namespace
