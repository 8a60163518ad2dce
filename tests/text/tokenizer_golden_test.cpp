// Golden tests of the tokenizers against transformers 4.30.2's slow AlbertTokenizer and
// BertTokenizer (shared/golden/tokenizers, README "tokenizers/"): every record must agree exactly.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "support/test_paths.h"
#include "text/tokenizer.h"

namespace tisa::text {
namespace {

using tisa::test::shared_path;

const char* kAlbertModel = "data/tokenizers/albert-30k-clean.reconstructed.model";
const char* kBertVocab = "data/tokenizers/bert-base-uncased-vocab.txt";

std::vector<nlohmann::json> read_jsonl(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> out;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

std::string show(const std::vector<int32_t>& v) {
  std::ostringstream s;
  s << '[';
  for (size_t i = 0; i < v.size(); ++i) s << (i ? "," : "") << v[i];
  return s.str() + ']';
}

// Encodes the "text" of every record and compares with `key`; reports agreement and the first
// few differences.
void check_file(const Tokenizer& tok, const std::string& file, const std::string& text_key, const std::string& key) {
  const auto records = read_jsonl(shared_path(file));
  ASSERT_FALSE(records.empty()) << file;
  size_t agree = 0;
  std::ostringstream diffs;
  int shown = 0;
  for (const auto& r : records) {
    const std::vector<int32_t> want = r[key];
    const auto got = tok.encode(r[text_key].get<std::string>());
    if (got == want) {
      ++agree;
    } else if (shown++ < 5) {
      diffs << "\n  text " << r[text_key].dump() << "\n   want " << show(want) << "\n   got  " << show(got);
    }
  }
  EXPECT_EQ(agree, records.size()) << file << " (" << key << "): " << agree << " / " << records.size()
                                   << " records agree" << diffs.str();
}

TEST(TokenizerGolden, AlbertDev) {
  TISA_REQUIRE_SHARED(kAlbertModel);
  TISA_REQUIRE_SHARED("golden/tokenizers/albert_spm_dev.jsonl");
  auto tok = load_tokenizer(shared_path(kAlbertModel));
  check_file(*tok, "golden/tokenizers/albert_spm_dev.jsonl", "text", "ids");
}

TEST(TokenizerGolden, BertDev) {
  TISA_REQUIRE_SHARED(kBertVocab);
  TISA_REQUIRE_SHARED("golden/tokenizers/bert_wordpiece_dev.jsonl");
  auto tok = load_tokenizer(shared_path(kBertVocab));
  check_file(*tok, "golden/tokenizers/bert_wordpiece_dev.jsonl", "text", "ids");
}

TEST(TokenizerGolden, EdgeCases) {
  TISA_REQUIRE_SHARED(kAlbertModel);
  TISA_REQUIRE_SHARED("golden/tokenizers/edge_cases.jsonl");
  auto albert = load_tokenizer(shared_path(kAlbertModel));
  auto bert = load_tokenizer(shared_path(kBertVocab));
  check_file(*albert, "golden/tokenizers/edge_cases.jsonl", "text", "albert_ids");
  check_file(*bert, "golden/tokenizers/edge_cases.jsonl", "text", "bert_ids");
  // The pieces too (tok.tokenize), which the ids are made from.
  for (const auto& r : read_jsonl(shared_path("golden/tokenizers/edge_cases.jsonl"))) {
    const std::string text = r["text"].get<std::string>();
    EXPECT_EQ(albert->tokenize(text), r["albert_tokens"].get<std::vector<std::string>>()) << r["name"];
    EXPECT_EQ(bert->tokenize(text), r["bert_tokens"].get<std::vector<std::string>>()) << r["name"];
  }
}

TEST(TokenizerGolden, PairsDev) {
  TISA_REQUIRE_SHARED(kAlbertModel);
  TISA_REQUIRE_SHARED("golden/tokenizers/pairs_dev.jsonl");
  auto albert = load_tokenizer(shared_path(kAlbertModel));
  auto bert = load_tokenizer(shared_path(kBertVocab));
  const auto records = read_jsonl(shared_path("golden/tokenizers/pairs_dev.jsonl"));
  ASSERT_EQ(records.size(), 685u);
  for (const auto& [name, tok] : {std::pair<std::string, const Tokenizer*>{"albert", albert.get()},
                                  std::pair<std::string, const Tokenizer*>{"bert", bert.get()}}) {
    size_t agree = 0, len_agree = 0;
    std::ostringstream diffs;
    int shown = 0;
    for (const auto& r : records) {
      const auto& want = r[name];
      const std::string a = r["text_a"].get<std::string>(), b = r["text_b"].get<std::string>();
      const PairEncoding enc = tok->encode_pair(a, b, r["max_length"].get<int64_t>());
      len_agree += int64_t(tok->encode(a).size()) == want["len_a"].get<int64_t>() &&
                   int64_t(tok->encode(b).size()) == want["len_b"].get<int64_t>();
      if (enc.input_ids == want["input_ids"].get<std::vector<int32_t>>() &&
          enc.token_type_ids == want["token_type_ids"].get<std::vector<int32_t>>()) {
        ++agree;
      } else if (shown++ < 5) {
        diffs << "\n  line " << r["line"] << " want " << want["input_ids"].dump() << "\n   got " << show(enc.input_ids);
      }
    }
    EXPECT_EQ(agree, records.size()) << "pairs_dev " << name << ": " << agree << " / " << records.size() << " agree"
                                     << diffs.str();
    EXPECT_EQ(len_agree, records.size()) << "pairs_dev " << name << " len_a/len_b";
  }
}

}  // namespace
}  // namespace tisa::text
