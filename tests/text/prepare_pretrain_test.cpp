// `prepare pretrain` with the real tokenizers, and SPEC §5 masking statistics on the resulting
// datasets (WikiText-2 valid through bert-base-uncased WordPiece and the ALBERT SentencePiece model).
#include <gtest/gtest.h>

#include <map>

#include "data/pretrain_examples.h"
#include "prep/prepare_pretrain.h"
#include "support/test_paths.h"
#include "text/tokenizer.h"

using namespace tisa;

namespace {

constexpr const char* kWiki = "data/corpus/wikitext-2-raw/wiki.valid.raw";
constexpr const char* kBert = "data/tokenizers/bert-base-uncased-vocab.txt";
constexpr const char* kAlbert = "data/tokenizers/albert-30k-clean.reconstructed.model";
constexpr const char* kBook = "data/corpus/gutenberg/Pride_and_Prejudice_JaneAusten.txt";  // 62 chapters
constexpr const char* kPlays = "data/corpus/gutenberg/tinyshakespeare.txt";  // 1.1 MB, one document

double valid_share(const prep::PreparePretrainReport& r) {
  return static_cast<double>(r.header.valid.tokens) / static_cast<double>(r.header.train.tokens + r.header.valid.tokens);
}

prep::PreparePretrainReport prepare(const std::string& tokenizer, const std::string& out, uint64_t seed = 1,
                                    double valid = 0.05, std::vector<std::string> inputs = {kWiki}) {
  prep::PreparePretrainOptions o;
  for (const auto& input : inputs) o.inputs.push_back(test::shared_path(input));
  o.tokenizer_path = test::shared_path(tokenizer);
  o.output = out;
  o.valid_fraction = valid;
  o.seed = seed;
  o.threads = 2;
  auto tok = text::load_tokenizer(o.tokenizer_path);
  return prep::prepare_pretrain(o, *tok);
}

void check_masking(const std::string& dir) {
  auto ds = std::make_shared<const data::PretrainDataset>(dir);
  data::ExampleOptions o;
  o.max_seq_length = 128;
  o.seed = 5;
  data::ExampleBuilder b(ds, "train", o);
  auto plan = b.plan(0);
  int64_t tokens = 0, masked = 0, as_mask = 0, kept = 0, random = 0, sop = 0, total_ngrams = 0;
  std::map<int, int64_t> ngrams;
  const auto& sp = b.special_ids();
  for (int64_t i = 0; i < plan->size(); ++i) {
    const auto e = b.build(*plan, i);
    tokens += e.length();
    sop += e.sop_label;
    for (int n : e.ngram_words) ++ngrams[n], ++total_ngrams;
    for (size_t k = 0; k < e.masked_positions.size(); ++k) {
      const int32_t now = e.input_ids[e.masked_positions[k]], orig = e.masked_labels[k];
      ASSERT_FALSE(b.is_special(orig)) << "id " << orig << " at " << e.masked_positions[k] << " of " << e.length();
      ASSERT_NE(e.masked_positions[k], 0);
      ++masked;
      if (now == sp.mask) ++as_mask;
      else if (now == orig) ++kept;
      else {
        ++random;
        ASSERT_FALSE(b.is_special(now));
      }
    }
  }
  const double n = static_cast<double>(plan->size());
  std::printf("%s: %lld examples, masked %.4f, mask/kept/random %.3f/%.3f/%.3f, sop %.3f, n 1/2/3 %.3f/%.3f/%.3f\n",
              dir.c_str(), (long long)plan->size(), double(masked) / tokens, double(as_mask) / masked,
              double(kept) / masked, double(random) / masked, sop / n, double(ngrams[1]) / total_ngrams,
              double(ngrams[2]) / total_ngrams, double(ngrams[3]) / total_ngrams);
  ASSERT_GT(plan->size(), 1000);
  EXPECT_NEAR(double(masked) / tokens, 0.15, 0.01);
  EXPECT_NEAR(double(as_mask) / masked, 0.8, 0.015);
  EXPECT_NEAR(double(kept) / masked, 0.1, 0.015);
  EXPECT_NEAR(double(random) / masked, 0.1, 0.015);
  EXPECT_NEAR(sop / n, 0.5, 0.04);
  EXPECT_NEAR(double(ngrams[1]) / total_ngrams, 6.0 / 11, 0.05);
  EXPECT_NEAR(double(ngrams[2]) / total_ngrams, 3.0 / 11, 0.05);
  EXPECT_NEAR(double(ngrams[3]) / total_ngrams, 2.0 / 11, 0.05);
}

}  // namespace

TEST(PreparePretrainTest, WordPieceDatasetMatchesTokenizerAndMasksWell) {
  TISA_REQUIRE_SHARED(kWiki);
  TISA_REQUIRE_SHARED(kBert);
  const auto dir = test::make_temp_dir("prep_bert");
  const auto r = prepare(kBert, dir);
  EXPECT_EQ(r.formats, (std::vector<std::string>{"wikitext"}));
  EXPECT_EQ(r.header.train.documents + r.header.valid.documents, 60);
  EXPECT_GE(r.header.valid.documents, 1);
  EXPECT_NEAR(valid_share(r), 0.05, 0.01);  // of the tokens; the rule counts bytes of text
  EXPECT_EQ(r.header.token_dtype, "uint16");
  EXPECT_EQ(r.header.tokenizer.special_ids.mask, 103);
  data::PretrainDataset ds(dir);
  auto tok = text::load_tokenizer(test::shared_path(kBert));
  const auto& tr = ds.split("train");
  // word-start bits are the tokenizer's, and the first sentence decodes to WikiText's text
  int64_t starts = 0;
  for (int64_t i = 1; i < tr.sentence_offsets()[1]; ++i)
    EXPECT_EQ(tr.word_start(i), tok->is_word_start(tr.token(i)));
  for (int64_t i = 0; i < tr.num_tokens(); ++i) starts += tr.word_start(i);
  EXPECT_GT(starts, tr.num_tokens() * 7 / 10);
  EXPECT_LT(starts, tr.num_tokens());
  check_masking(dir);
}

TEST(PreparePretrainTest, SentencePieceDatasetMasksWell) {
  TISA_REQUIRE_SHARED(kWiki);
  TISA_REQUIRE_SHARED(kAlbert);
  const auto dir = test::make_temp_dir("prep_albert");
  const auto r = prepare(kAlbert, dir);
  EXPECT_EQ(r.header.tokenizer.special_ids.cls, 2);
  EXPECT_EQ(r.header.tokenizer.type, "sentencepiece");
  check_masking(dir);
}

TEST(PreparePretrainTest, SplitIsDeterministicFromSeed) {
  TISA_REQUIRE_SHARED(kWiki);
  TISA_REQUIRE_SHARED(kBert);
  const auto a = prepare(kBert, test::make_temp_dir("prep_s1"), 7, 0.1);
  const auto b = prepare(kBert, test::make_temp_dir("prep_s1b"), 7, 0.1);
  const auto c = prepare(kBert, test::make_temp_dir("prep_s2"), 8, 0.1);
  EXPECT_NEAR(valid_share(a), 0.1, 0.015);
  EXPECT_EQ(a.header.valid.tokens, b.header.valid.tokens);
  EXPECT_EQ(a.header.valid.sentences, b.header.valid.sentences);
  EXPECT_NE(a.header.valid.tokens, c.header.valid.tokens);
  const auto none = prepare(kBert, test::make_temp_dir("prep_none"), 7, 0.0);
  EXPECT_EQ(none.header.valid.documents, 0);
  EXPECT_EQ(none.header.train.tokens, a.header.train.tokens + a.header.valid.tokens);
}

// The split is a share of the text: a corpus that mixes chapters and articles of ~20 kB with one
// document of 1.1 MB (tinyshakespeare has no chapter marks) gets a validation split of the asked
// size from the small documents, and the large one is trained on. Counting documents instead
// held out 12 of the 123 documents here, 6.3 % of the tokens for --valid-fraction 0.1 — and, with
// the large one drawn, far more than asked, almost all of it one text never trained on (the
// `cpu` paper run: 15 of 757 documents, 13 % of the tokens, 85 % of them Shakespeare).
TEST(PreparePretrainTest, ValidSplitIsTheAskedShareOfTheText) {
  TISA_REQUIRE_SHARED(kBook);
  TISA_REQUIRE_SHARED(kPlays);
  TISA_REQUIRE_SHARED(kWiki);
  TISA_REQUIRE_SHARED(kAlbert);
  const auto r = prepare(kAlbert, test::make_temp_dir("prep_share"), 12345, 0.1, {kBook, kPlays, kWiki});
  EXPECT_EQ(r.header.train.documents + r.header.valid.documents, 62 + 1 + 60);
  EXPECT_NEAR(valid_share(r), 0.1, 0.015) << r.header.valid.tokens << " of "
                                          << r.header.train.tokens + r.header.valid.tokens << " tokens";
}
