// Unit tests of the tokenizers: bad files, invalid UTF-8, empty input, hand-computed truncation,
// Python-compatible Unicode helpers, batch encoding and the loader's directory form.
#include <gtest/gtest.h>

#include <fstream>

#include "common/error.h"
#include "common/fs.h"
#include "support/test_paths.h"
#include "text/batch_encode.h"
#include "text/tokenizer.h"
#include "text/unicode.h"
#include "text/wordpiece_tokenizer.h"

namespace tisa::text {
namespace {

using tisa::test::make_temp_dir;
using tisa::test::shared_path;

const char* kAlbertModel = "data/tokenizers/albert-30k-clean.reconstructed.model";
const char* kBertVocab = "data/tokenizers/bert-base-uncased-vocab.txt";

void write(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary) << data;
}

// Expects load_tokenizer(path) to throw tisa::Error whose message names `path`.
void expect_error_naming(const std::string& path) {
  try {
    (void)load_tokenizer(path);
    ADD_FAILURE() << "no error for " << path;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(TokenizerFiles, MissingEmptyCorrupt) {
  const std::string dir = make_temp_dir("tok_bad");
  expect_error_naming(dir + "/missing.model");
  expect_error_naming(dir + "/missing_vocab.txt");
  write(dir + "/empty.model", "");
  expect_error_naming(dir + "/empty.model");
  write(dir + "/empty.txt", "");
  expect_error_naming(dir + "/empty.txt");
  write(dir + "/garbage.model", std::string("\x08\x96\x01not a protobuf at all \xff\xfe", 26));
  expect_error_naming(dir + "/garbage.model");
  write(dir + "/binary.txt", std::string("\0\1\2\3[UNK]\n", 10));
  expect_error_naming(dir + "/binary.txt");
  write(dir + "/no_unk.txt", "a\nb\n");
  expect_error_naming(dir + "/no_unk.txt");
  // A directory with a corrupt JSON names the JSON file.
  const std::string tdir = make_temp_dir("tok_dir");
  write(tdir + "/tisa_tokenizer.json", "{not json");
  try {
    (void)load_tokenizer(tdir);
    ADD_FAILURE() << "no error for corrupt json";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tisa_tokenizer.json"), std::string::npos) << e.what();
  }
}

TEST(TokenizerFiles, DirectoryWithJsonAndOptions) {
  TISA_REQUIRE_SHARED(kBertVocab);
  const std::string dir = make_temp_dir("tok_json");
  write(dir + "/vocab.txt", tisa::fs::read_file(shared_path(kBertVocab)));
  write(dir + "/tisa_tokenizer.json", R"({"type":"wordpiece","file":"vocab.txt","lowercase":false})");
  auto cased = load_tokenizer(dir);
  EXPECT_EQ(cased->type(), "wordpiece");
  // Cased: "Hello" is not in the uncased vocab as such -> split differently from "hello".
  EXPECT_NE(cased->encode("Hello"), cased->encode("hello"));
  auto forced = load_tokenizer(dir, TokenizerOptions{true, std::nullopt});  // the option wins
  EXPECT_EQ(forced->encode("Hello"), forced->encode("hello"));
  EXPECT_NE(cased->identity(), forced->identity());
}

TEST(TokenizerInput, InvalidUtf8AndEmpty) {
  TISA_REQUIRE_SHARED(kAlbertModel);
  auto albert = load_tokenizer(shared_path(kAlbertModel));
  auto bert = load_tokenizer(shared_path(kBertVocab));
  for (const Tokenizer* tok : {albert.get(), bert.get()}) {
    EXPECT_TRUE(tok->encode("").empty());
    EXPECT_TRUE(tok->encode("    \t  ").empty());
    EXPECT_TRUE(tok->encode("\n").empty());
    // Each invalid byte reads as U+FFFD: the same ids as the text with U+FFFD written out.
    EXPECT_EQ(tok->encode("bad \xff byte"), tok->encode("bad \xEF\xBF\xBD byte"));
    EXPECT_EQ(tok->encode("x\xC3"), tok->encode("x\xEF\xBF\xBD"));                  // truncated sequence
    EXPECT_EQ(tok->encode("a\xED\xA0\x80z"), tok->encode("a\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBDz"));  // surrogate
    EXPECT_EQ(tok->encode("\xC0\xAF"), tok->encode("\xEF\xBF\xBD\xEF\xBF\xBD"));      // overlong
    std::string junk;
    for (int i = 0; i < 4096; ++i) junk.push_back(char((i * 37 + 11) & 0xFF));
    EXPECT_NO_THROW((void)tok->encode(junk));
  }
  // BERT drops U+FFFD, so invalid bytes vanish.
  EXPECT_EQ(bert->encode("bad\xff"), bert->encode("bad"));
}

TEST(TokenizerPairs, LongestFirstByHand) {
  TISA_REQUIRE_SHARED(kBertVocab);
  auto bert = load_tokenizer(shared_path(kBertVocab));
  // "a b c d e" -> 5 ids, "x y" -> 2 ids; max_length 8 -> budget 5: a loses 2 (5,2 -> 3,2).
  const PairEncoding e = bert->encode_pair("a b c d e", "x y", 8);
  const auto a = bert->encode("a b c"), b = bert->encode("x y");
  std::vector<int32_t> want = {101};
  want.insert(want.end(), a.begin(), a.end());
  want.push_back(102);
  want.insert(want.end(), b.begin(), b.end());
  want.push_back(102);
  EXPECT_EQ(e.input_ids, want);
  EXPECT_EQ(e.token_type_ids, (std::vector<int32_t>{0, 0, 0, 0, 0, 1, 1, 1}));
  // Equal lengths: b is cut first. 3 + 3 into budget 5 -> 3 + 2.
  const PairEncoding t = bert->encode_pair("a b c", "x y z", 8);
  EXPECT_EQ(t.input_ids.size(), 8u);
  EXPECT_EQ(t.input_ids[4], 102);
  EXPECT_EQ(std::vector<int32_t>(t.input_ids.begin() + 5, t.input_ids.end() - 1), bert->encode("x y"));
  const PairEncoding s = bert->encode_single("a b c d e", 4);
  EXPECT_EQ(s.input_ids, (std::vector<int32_t>{101, a[0], a[1], 102}));
  EXPECT_THROW((void)bert->encode_pair("a", "b", 2), Error);
}

TEST(Unicode, PythonBehaviours) {
  using namespace unicode;
  EXPECT_EQ(python_lower(U"\u0130"), std::u32string(U"i\u0307"));
  EXPECT_EQ(python_lower(U"ΟΔΟΣ ΣΑ Σ"), std::u32string(U"οδος σα σ"));  // final sigma only word-finally
  EXPECT_EQ(python_lower(U"ẞ"), std::u32string(U"ß"));
  for (char32_t c : {U'\x1c', U'\x1f', U'\x85', U'\xa0', U'\u3000', U'\u2028', U'\u2009'}) EXPECT_TRUE(is_python_space(c));
  for (char32_t c : {U'\u200b', U'\ufeff', U'a'}) EXPECT_FALSE(is_python_space(c));
  EXPECT_TRUE(is_python_digit(U'²'));
  EXPECT_TRUE(is_python_digit(U'٣'));
  EXPECT_FALSE(is_python_digit(U'½'));
  EXPECT_EQ(nfkd(U"ﬁ"), std::u32string(U"fi"));
  EXPECT_EQ(nfc(U"e\u0301"), std::u32string(U"\u00e9"));
  EXPECT_EQ(nfd(U"\u00e9"), std::u32string(U"e\u0301"));
  EXPECT_EQ(decode("a\xff"), std::u32string(U"a\uFFFD"));
}

TEST(TokenizerBatch, MatchesSequentialAndWordStarts) {
  TISA_REQUIRE_SHARED(kAlbertModel);
  auto albert = load_tokenizer(shared_path(kAlbertModel));
  auto bert = load_tokenizer(shared_path(kBertVocab));
  std::vector<std::string> texts;
  for (int i = 0; i < 1000; ++i) texts.push_back("Line " + std::to_string(i) + ": naïve tokenization, 1,000 times!");
  for (const Tokenizer* tok : {albert.get(), bert.get()}) {
    const auto batch = encode_batch(*tok, texts, 4);
    ASSERT_EQ(batch.size(), texts.size());
    for (size_t i = 0; i < texts.size(); i += 97) EXPECT_EQ(batch[i], tok->encode(texts[i]));
  }
  const auto ids = bert->encode("tokenization");  // token ##ization
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_TRUE(bert->is_word_start(ids[0]));
  EXPECT_FALSE(bert->is_word_start(ids[1]));
  EXPECT_EQ(bert->decode(ids), "tokenization");
  const auto aids = albert->encode("hello, my dog is cute");
  EXPECT_EQ(aids, (std::vector<int32_t>{10975, 15, 51, 1952, 25, 10901}));
  EXPECT_TRUE(albert->is_word_start(aids[0]));
  EXPECT_FALSE(albert->is_word_start(aids[1]));  // ","
  EXPECT_EQ(albert->decode(aids), "hello, my dog is cute");
  const SpecialIds& s = albert->special_ids();
  EXPECT_EQ((std::vector<int32_t>{s.pad, s.unk, s.cls, s.sep, s.mask}), (std::vector<int32_t>{0, 1, 2, 3, 4}));
  const SpecialIds& b = bert->special_ids();
  EXPECT_EQ((std::vector<int32_t>{b.pad, b.unk, b.cls, b.sep, b.mask}), (std::vector<int32_t>{0, 100, 101, 102, 103}));
}

}  // namespace
}  // namespace tisa::text
