// Round trip and corruption checks of the tokenised GLUE split format (src/data/glue_dataset.h).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/fs.h"
#include "data/glue_dataset.h"
#include "support/test_paths.h"

namespace {

tisa::data::GlueEncodedSplit sample_split() {
  tisa::data::GlueEncodedSplit s;
  s.task = "RTE";
  s.split = "dev";
  s.tokenizer_identity = "wordpiece:0123";
  s.max_length = 16;
  s.has_labels = true;
  s.add({101, 7, 8, 102, 9, 102}, {0, 0, 0, 0, 1, 1}, 1.0f, 0, 2);
  s.add({101, 5, 102}, {0, 0, 0}, 0.0f, 1, 3);
  s.add({101, 102, 102}, {0, 0, 1}, std::nanf(""), 7, 4);
  return s;
}

}  // namespace

TEST(GlueDatasetTest, RoundTripKeepsEveryField) {
  auto dir = tisa::test::make_temp_dir("glue_ds");
  auto s = sample_split();
  tisa::data::write_glue_split(dir + "/dev.bin", s);
  auto r = tisa::data::read_glue_split(dir + "/dev.bin");
  EXPECT_EQ(r.task, "RTE");
  EXPECT_EQ(r.split, "dev");
  EXPECT_EQ(r.tokenizer_identity, "wordpiece:0123");
  EXPECT_EQ(r.max_length, 16);
  EXPECT_TRUE(r.has_labels);
  EXPECT_FALSE(r.regression);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r.length(0), 6);
  EXPECT_EQ(r.length(1), 3);
  EXPECT_EQ(r.ids(1)[1], 5);
  EXPECT_EQ(r.types(0)[4], 1);
  EXPECT_EQ(r.labels[0], 1.0f);
  EXPECT_TRUE(std::isnan(r.labels[2]));
  EXPECT_EQ(r.indices[2], 7);
  EXPECT_EQ(r.lines[1], 3);
  EXPECT_EQ(r.input_ids, s.input_ids);
  EXPECT_EQ(r.token_type_ids, s.token_type_ids);
}

TEST(GlueDatasetTest, TruncatedAndForeignFilesAreRefusedWithTheirName) {
  auto dir = tisa::test::make_temp_dir("glue_ds_bad");
  tisa::data::write_glue_split(dir + "/dev.bin", sample_split());
  std::string bytes = tisa::fs::read_file(dir + "/dev.bin");
  tisa::fs::write_file_atomic(dir + "/cut.bin", bytes.substr(0, bytes.size() - 5));
  try {
    tisa::data::read_glue_split(dir + "/cut.bin");
    FAIL() << "expected an error";
  } catch (const tisa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cut.bin"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("prepare glue"), std::string::npos) << e.what();
  }
  tisa::fs::write_file_atomic(dir + "/other.bin", "NOTAGLUEFILE............");
  EXPECT_THROW(tisa::data::read_glue_split(dir + "/other.bin"), tisa::Error);
  bytes[8] = 99;  // version
  tisa::fs::write_file_atomic(dir + "/version.bin", bytes);
  EXPECT_THROW(tisa::data::read_glue_split(dir + "/version.bin"), tisa::Error);
}

TEST(GlueDatasetTest, ManifestListsSplitsAndMissingSplitIsNamed) {
  auto dir = tisa::test::make_temp_dir("glue_manifest");
  nlohmann::json m = {{"format", "tisa-glue"},
                      {"version", 1},
                      {"task", "MNLI"},
                      {"cache_key", "abc"},
                      {"max_length", 128},
                      {"tokenizer", {{"identity", "x"}, {"type", "wordpiece"}, {"vocab_size", 30522}, {"pad", 0}}},
                      {"split_order", {"train", "dev_matched"}},
                      {"splits", {{"train", {{"examples", 10}}}, {"dev_matched", {{"examples", 3}}}}}};
  tisa::fs::write_file_atomic(dir + "/manifest.json", m.dump());
  auto man = tisa::data::read_glue_manifest(dir);
  EXPECT_EQ(man.task, "MNLI");
  ASSERT_EQ(man.splits.size(), 2u);
  EXPECT_EQ(man.examples[1], 3);
  EXPECT_EQ(tisa::data::glue_split_path(dir, "train"), dir + "/train.bin");
  try {
    tisa::data::glue_split_path(dir, "dev");
    FAIL();
  } catch (const tisa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("dev_matched"), std::string::npos) << e.what();
  }
}
