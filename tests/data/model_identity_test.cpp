// Issue 36, identity at the hand-over from a model folder to the data it is given: the folder's
// tisa_identity.json names its tokenizer and the files' hashes; a replaced tokenizer file, or data
// made with another tokenizer, is refused naming both identities.
#include <gtest/gtest.h>

#include <string>

#include "common/error.h"
#include "common/fs.h"
#include "data/model_identity.h"
#include "support/test_paths.h"

namespace {

using namespace tisa;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ModelIdentity, RecordsAndVerifiesTheTokenizerFiles) {
  const std::string dir = test::make_temp_dir("model_id");
  EXPECT_FALSE(data::verified_model_identity(dir)) << "no record: nothing to check";
  fs::write_file_atomic(dir + "/spiece.model", "30,000 pieces");
  data::write_model_identity(dir, "sentencepiece-aaaa-lc", "dataset-1111");
  const auto id = data::verified_model_identity(dir);
  ASSERT_TRUE(id);
  EXPECT_EQ(id->tokenizer, "sentencepiece-aaaa-lc");
  EXPECT_EQ(id->dataset, "dataset-1111");
  EXPECT_EQ(id->tokenizer_files.at("spiece.model"), fs::file_hash_hex(dir + "/spiece.model"));

  fs::write_file_atomic(dir + "/spiece.model", "2,000 pieces");
  const std::string e = error_of([&] { data::verified_model_identity(dir); });
  EXPECT_NE(e.find(dir + "/spiece.model is not the tokenizer this model was trained with (sentencepiece-aaaa-lc)"),
            std::string::npos)
      << e;
}

// Pretraining folders also record how the MLM targets were drawn; older records have none.
TEST(ModelIdentity, RecordsThePretrainingMasking) {
  const std::string dir = test::make_temp_dir("model_id_masking");
  data::write_model_identity(dir, "sentencepiece-aaaa-lc", "dataset-1111", data::MaskingRecord{0.2, 1});
  const auto id = data::read_model_identity(dir);
  ASSERT_TRUE(id && id->masking);
  EXPECT_EQ(id->masking->masked_lm_prob, 0.2);
  EXPECT_EQ(id->masking->max_ngram, 1);
  data::write_model_identity(dir, "sentencepiece-aaaa-lc", "dataset-1111");
  EXPECT_FALSE(data::read_model_identity(dir)->masking);
}

TEST(ModelIdentity, DataOfAnotherTokenizerIsRefused) {
  const std::string dir = test::make_temp_dir("model_id_data");
  fs::write_file_atomic(dir + "/spiece.model", "30,000 pieces");
  data::write_model_identity(dir, "sentencepiece-aaaa-lc", "dataset-1111");
  const auto id = data::verified_model_identity(dir);
  const auto files = id->tokenizer_files;
  EXPECT_EQ(error_of([&] { data::check_same_tokenizer(id, dir, "sentencepiece-aaaa-lc", files, "the dataset D"); }), "");
  std::string e = error_of([&] { data::check_same_tokenizer(id, dir, "sentencepiece-bbbb-lc", {}, "the dataset D"); });
  EXPECT_NE(e.find("the dataset D was tokenised with sentencepiece-bbbb-lc, but the model " + dir +
                   " was trained with sentencepiece-aaaa-lc"),
            std::string::npos)
      << e;
  e = error_of([&] {
    data::check_same_tokenizer(id, dir, "sentencepiece-aaaa-lc", {{"spiece.model", "0123"}}, "the dataset D");
  });
  EXPECT_NE(e.find("another spiece.model"), std::string::npos) << e;
  EXPECT_EQ(error_of([&] { data::check_same_tokenizer(std::nullopt, dir, "x", {}, "the dataset D"); }), "");
}

}  // namespace
