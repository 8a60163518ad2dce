// Pretraining dataset format: write/read round trips (uint16 and int32 ids) and detection of
// corrupt, truncated and mismatched files, with errors naming the file and the command to re-run.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "common/fs.h"
#include "data/pretrain_test_util.h"
#include "support/test_paths.h"

using namespace tisa;
using data::DocumentTokens;

namespace {

std::vector<DocumentTokens> small_docs(int32_t vocab) {
  int32_t next = 5;
  std::vector<DocumentTokens> docs(3);
  docs[0] = {test::toy_sentence(3, 2, next, vocab), test::toy_sentence(1, 1, next, vocab)};
  docs[1] = {test::toy_sentence(2, 3, next, vocab)};
  docs[2] = {test::toy_sentence(5, 1, next, vocab), {}, test::toy_sentence(2, 2, next, vocab)};
  return docs;
}

void expect_error_mentions(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    FAIL() << "expected tisa::Error";
  } catch (const Error& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

void check_round_trip(int64_t vocab, const char* dtype) {
  auto dir = test::make_temp_dir("pretrain_ds");
  auto docs = small_docs(static_cast<int32_t>(std::min<int64_t>(vocab, 70000)));
  if (vocab > 65536) docs[0][0].ids[0] = static_cast<int32_t>(vocab - 1);  // needs int32
  auto ds = test::write_toy_dataset(dir, docs, /*valid_every=*/2, vocab);
  EXPECT_EQ(ds->header().token_dtype, dtype);
  EXPECT_EQ(ds->header().tokenizer.vocab_size, vocab);
  EXPECT_EQ(ds->header().tokenizer.special_ids.mask, 4);
  // documents 0 and 2 → train, 1 → valid; the empty sentence of document 2 is skipped
  const auto& tr = ds->split("train");
  const auto& va = ds->split("valid");
  EXPECT_EQ(tr.num_documents(), 2);
  EXPECT_EQ(tr.num_sentences(), 4);
  EXPECT_EQ(tr.num_tokens(), 6 + 1 + 5 + 4);
  EXPECT_EQ(va.num_documents(), 1);
  EXPECT_EQ(va.num_tokens(), 6);
  EXPECT_EQ(ds->header().train.tokens, tr.num_tokens());
  std::vector<const data::SentenceTokens*> want;
  for (int d : {0, 2})
    for (const auto& s : docs[d])
      if (!s.ids.empty()) want.push_back(&s);
  ASSERT_EQ(want.size(), 4u);
  for (int64_t s = 0; s < 4; ++s) {
    std::vector<int32_t> ids;
    std::vector<uint8_t> starts;
    tr.append_tokens(tr.sentence_offsets()[s], tr.sentence_offsets()[s + 1], ids, &starts);
    EXPECT_EQ(ids, want[s]->ids) << "sentence " << s;
    EXPECT_EQ(starts, want[s]->word_start) << "sentence " << s;
  }
  EXPECT_EQ(tr.document_offsets()[1], 2);
  EXPECT_EQ(tr.document_offsets()[2], 4);
  EXPECT_EQ(ds->header().created.at("by"), "test");
}

}  // namespace

TEST(PretrainDatasetTest, RoundTripUint16) { check_round_trip(30000, "uint16"); }
TEST(PretrainDatasetTest, RoundTripInt32ForLargeVocab) { check_round_trip(100000, "int32"); }

TEST(PretrainDatasetTest, WordStartBitsSurviveManyTokens) {
  auto dir = test::make_temp_dir("pretrain_bits");
  data::DocumentTokens doc(1);
  for (int i = 0; i < 1000; ++i) {
    doc[0].ids.push_back(5 + i);
    doc[0].word_start.push_back((i * 7919) % 3 == 0);
  }
  auto ds = test::write_toy_dataset(dir, {doc});
  const auto& tr = ds->split("train");
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(tr.token(i), 5 + i);
    ASSERT_EQ(tr.word_start(i), doc[0].word_start[i] != 0) << i;
  }
  EXPECT_EQ(ds->split("valid").num_documents(), 0);
}

TEST(PretrainDatasetTest, RejectsIdsOutsideVocabulary) {
  data::PretrainDatasetWriter w(test::make_temp_dir("pretrain_bad"), test::toy_tokenizer_info(100), {});
  data::DocumentTokens doc{{{5, 100}, {1, 1}}};
  EXPECT_THROW(w.add_document("train", doc), Error);
  EXPECT_THROW(w.add_document("test", {}), Error);
}

TEST(PretrainDatasetTest, MissingHeaderNamesTheCommand) {
  auto dir = test::make_temp_dir("pretrain_missing");
  expect_error_mentions([&] { data::PretrainDataset ds(dir); }, {dir, "header.json", "tisa-train prepare pretrain"});
  // An unfinished writer leaves no header either.
  {
    data::PretrainDatasetWriter w(dir, test::toy_tokenizer_info(), {});
    w.add_document("train", small_docs(30000)[0]);
  }
  EXPECT_THROW(data::PretrainDataset ds(dir), Error);
}

TEST(PretrainDatasetTest, DetectsTruncatedFile) {
  auto dir = test::make_temp_dir("pretrain_trunc");
  test::write_toy_dataset(dir, small_docs(30000));
  const std::string path = dir + "/train.tokens.bin";
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 2);
  expect_error_mentions([&] { data::PretrainDataset ds(dir); }, {path, "truncated", "tisa-train prepare pretrain"});
  std::filesystem::resize_file(path, 10);
  expect_error_mentions([&] { data::PretrainDataset ds(dir); }, {path, "truncated"});
}

TEST(PretrainDatasetTest, DetectsTrailingBytesAndBadMagic) {
  auto dir = test::make_temp_dir("pretrain_magic");
  test::write_toy_dataset(dir, small_docs(30000));
  {
    std::ofstream f(dir + "/valid.sentences.bin", std::ios::app | std::ios::binary);
    f << "xx";
  }
  expect_error_mentions([&] { data::PretrainDataset ds(dir); }, {"valid.sentences.bin", "trailing"});
  test::write_toy_dataset(dir, small_docs(30000));
  {
    std::fstream f(dir + "/train.documents.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f << "NOTMAGIC";
  }
  expect_error_mentions([&] { data::PretrainDataset ds(dir); }, {"train.documents.bin", "magic"});
}

TEST(PretrainDatasetTest, DetectsHeaderMismatches) {
  auto dir = test::make_temp_dir("pretrain_hdr");
  test::write_toy_dataset(dir, small_docs(30000));
  const std::string hpath = dir + "/header.json";
  const auto original = nlohmann::json::parse(fs::read_file(hpath));
  // Each edit is stamped with the identity of its content, so that the check behind the identity
  // check is what answers (an unstamped edit: DatasetIdentity.AnEditedHeaderIsRefused).
  auto with = [&](const std::function<void(nlohmann::json&)>& edit) {
    auto j = original;
    edit(j);
    j["identity"] = data::dataset_identity(j);
    fs::write_file_atomic(hpath, j.dump());
  };
  with([](auto& j) { j["magic"] = "something-else"; });
  expect_error_mentions([&] { data::PretrainDataset ds(dir); }, {hpath, "magic"});
  with([](auto& j) { j["format_version"] = 99; });
  expect_error_mentions([&] { data::PretrainDataset ds(dir); }, {hpath, "format_version 99"});
  with([](auto& j) { j["splits"]["train"]["tokens"] = 17; });
  expect_error_mentions([&] { data::PretrainDataset ds(dir); }, {"train.tokens.bin", "17"});
  with([](auto& j) { j["tokenizer"]["vocab_size"] = 100000; });  // says int32, files are uint16
  expect_error_mentions([&] { data::PretrainDataset ds(dir); }, {hpath, "token_dtype"});
  with([](auto& j) { j["tokenizer"].erase("special_ids"); });
  expect_error_mentions([&] { data::PretrainDataset ds(dir); }, {hpath, "special_ids"});
  fs::write_file_atomic(hpath, "{not json");
  expect_error_mentions([&] { data::PretrainDataset ds(dir); }, {hpath, "JSON"});
  with([](auto&) {});
  EXPECT_NO_THROW(data::PretrainDataset ds(dir));
}

// Issue 18, class 7: a token id past the recorded vocabulary (a damaged or hand-made file) is an
// error naming the file and the token when the dataset is opened, not an index error mid-training.
TEST(PretrainDatasetTest, DetectsIdsPastTheVocabularyInTheFile) {
  auto dir = test::make_temp_dir("pretrain_ids");
  test::write_toy_dataset(dir, small_docs(30000));
  const std::string path = dir + "/train.tokens.bin";
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(32 + 2 * 3);  // after the 32-byte header: token 3 (uint16)
    const unsigned char id[2] = {0xFF, 0xFF};
    f.write(reinterpret_cast<const char*>(id), 2);
  }
  expect_error_mentions([&] { data::PretrainDataset ds(dir); }, {path, "hashes to", "changed or replaced"});
  // A dataset without a manifest (prepared before them) still has its ids checked.
  auto j = nlohmann::json::parse(fs::read_file(dir + "/header.json"));
  j.erase("identity");
  j.erase("manifest");
  fs::write_file_atomic(dir + "/header.json", j.dump());
  expect_error_mentions([&] { data::PretrainDataset ds(dir); },
                        {path, "token 3 is id 65535, outside the vocabulary [0, 30000)"});
}

// Issue 36, identity at the hand-over from preparation to training: the header's identity covers
// its content, the token files and the tokenizer files; the same content has the same identity.
TEST(DatasetIdentity, SameContentSameIdentityOtherContentOther) {
  const auto a = test::make_temp_dir("ds_id_a"), b = test::make_temp_dir("ds_id_b"), c = test::make_temp_dir("ds_id_c");
  const std::string id_a = test::write_toy_dataset(a, small_docs(30000))->header().identity;
  EXPECT_EQ(id_a.rfind("dataset-", 0), 0u) << id_a;
  EXPECT_EQ(test::write_toy_dataset(b, small_docs(30000))->header().identity, id_a) << "another folder, same content";
  auto docs = small_docs(30000);
  docs[1][0].ids[0] += 1;  // one token differs
  EXPECT_NE(test::write_toy_dataset(c, docs)->header().identity, id_a);
  EXPECT_EQ(data::read_pretrain_header(a).identity, id_a);
  EXPECT_EQ(data::read_pretrain_header(a).file_hashes.size(), 8u);
}

TEST(DatasetIdentity, AnEditedHeaderIsRefused) {
  auto dir = test::make_temp_dir("ds_id_edit");
  test::write_toy_dataset(dir, small_docs(30000));
  const std::string hpath = dir + "/header.json";
  auto j = nlohmann::json::parse(fs::read_file(hpath));
  j["tokenizer"]["identity"] = "sentencepiece-0000000000000000-lc";
  fs::write_file_atomic(hpath, j.dump());
  expect_error_mentions([&] { data::read_pretrain_header(dir); }, {hpath, "edited after preparation", "dataset-"});
}

TEST(DatasetIdentity, AReplacedTokenizerFileIsRefused) {
  auto dir = test::make_temp_dir("ds_id_tok");
  fs::write_file_atomic(dir + "/spiece.model", "the tokenizer the data was made with");
  {
    data::PretrainDatasetWriter w(dir, test::toy_tokenizer_info(), {});
    for (const auto& d : small_docs(30000)) w.add_document("train", d);
    EXPECT_EQ(w.finish().tokenizer_files.count("spiece.model"), 1u);
  }
  EXPECT_NO_THROW(data::PretrainDataset ds(dir));
  fs::write_file_atomic(dir + "/spiece.model", "a 1,000-piece model put in its place");
  expect_error_mentions([&] { data::PretrainDataset ds(dir); },
                        {dir + "/spiece.model", "is not the tokenizer this dataset was prepared with", "manifest"});
}
