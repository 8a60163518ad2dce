// Training tests on a slice of the real corpus: both kinds train quickly into a directory that
// loads, has the special tokens at the documented ids, and encodes its training text sensibly.
#include <gtest/gtest.h>

#include <fstream>

#include "common/fs.h"
#include "support/test_paths.h"
#include "text/tokenizer.h"
#include "text/tokenizer_trainer.h"

namespace tisa::text {
namespace {

using tisa::test::make_temp_dir;
using tisa::test::shared_path;

const char* kBotchan = "data/corpus/sentencepiece/botchan.txt";  // BOM + CRLF

TEST(TokenizerTrain, ReadsBomAndCrlf) {
  TISA_REQUIRE_SHARED(kBotchan);
  const auto lines = read_text_lines({shared_path(kBotchan)});
  ASSERT_GT(lines.size(), 4000u);
  EXPECT_NE(lines[0].substr(0, 3), "\xEF\xBB\xBF");
  for (const auto& l : lines) ASSERT_TRUE(l.empty() || l.back() != '\r');
}

TEST(TokenizerTrain, WordPiece) {
  TISA_REQUIRE_SHARED(kBotchan);
  TokenizerTrainOptions o;
  o.type = "wordpiece";
  o.inputs = {shared_path(kBotchan)};
  o.vocab_size = 2000;
  o.output_dir = make_temp_dir("wp_train");
  o.threads = 2;
  train_tokenizer(o);
  auto tok = load_tokenizer(o.output_dir);
  EXPECT_EQ(tok->type(), "wordpiece");
  EXPECT_EQ(tok->vocab_size(), 2000);
  const SpecialIds& s = tok->special_ids();
  EXPECT_EQ((std::vector<int32_t>{s.pad, s.unk, s.cls, s.sep, s.mask}), (std::vector<int32_t>{0, 1, 2, 3, 4}));
  // Frequent words of the book are single tokens; a rare word splits into known pieces, no [UNK].
  EXPECT_EQ(tok->encode("the").size(), 1u);
  const auto ids = tok->encode("Botchan went to the school, said the Red Shirt.");
  for (int32_t id : ids) EXPECT_NE(id, s.unk);
  EXPECT_EQ(tok->decode(tok->encode("the red shirt")), "the red shirt");
  // Deterministic: a second run gives the same vocabulary.
  TokenizerTrainOptions o2 = o;
  o2.output_dir = make_temp_dir("wp_train2");
  o2.threads = 1;
  train_tokenizer(o2);
  EXPECT_EQ(fs::read_file(o.output_dir + "/vocab.txt"), fs::read_file(o2.output_dir + "/vocab.txt"));
}

TEST(TokenizerTrain, WordPieceMergesByHand) {
  // "aaab" x3 and "ab" x1: pairs a,##a (6) a,##b (1) ##a,##a (3) ##a,##b (3). The first merge is
  // (a, ##a) -> "aa"; then (aa, ##a) 3 ties with (##a, ##b)... ordered by ids, see below.
  TokenizerTrainOptions o;
  o.vocab_size = 100;
  o.min_frequency = 2;
  const auto vocab = learn_wordpiece_vocab({"aaab aaab aaab ab"}, o);
  // specials, alphabet a b, continuation ##a ##b, then merges.
  ASSERT_GE(vocab.size(), 10u);
  EXPECT_EQ(std::vector<std::string>(vocab.begin(), vocab.begin() + 9),
            (std::vector<std::string>{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "##a", "##b"}));
  EXPECT_EQ(vocab[9], "aa");
  // After "aa": words aa ##a ##b (x3), a ##b (x1): pairs (aa,##a) 3, (##a,##b) 3, (a,##b) 1.
  // Tie on 3: the pair of smaller ids wins, (##a=7, ##b=8) < (aa=9, ##a=7).
  EXPECT_EQ(vocab[10], "##ab");
  EXPECT_EQ(vocab[11], "aaab");
  EXPECT_EQ(vocab.size(), 12u);  // (a, ##b) is seen once < min_frequency
}

TEST(TokenizerTrain, SentencePiece) {
  TISA_REQUIRE_SHARED(kBotchan);
  TokenizerTrainOptions o;
  o.type = "sentencepiece";
  o.inputs = {shared_path(kBotchan)};
  o.vocab_size = 1000;
  o.output_dir = make_temp_dir("sp_train");
  o.threads = 2;
  train_tokenizer(o);
  auto tok = load_tokenizer(o.output_dir);
  EXPECT_EQ(tok->type(), "sentencepiece");
  EXPECT_EQ(tok->vocab_size(), 1000);
  const SpecialIds& s = tok->special_ids();
  EXPECT_EQ((std::vector<int32_t>{s.pad, s.unk, s.cls, s.sep, s.mask}), (std::vector<int32_t>{0, 1, 2, 3, 4}));
  const auto ids = tok->encode("The Red Shirt said Botchan was a fool.");
  ASSERT_FALSE(ids.empty());
  for (int32_t id : ids) EXPECT_GT(id, 4);  // no special or unknown pieces
  EXPECT_TRUE(tok->is_word_start(ids[0]));
  // Lowercased at training and encoding time.
  EXPECT_EQ(tok->encode("THE RED SHIRT"), tok->encode("the red shirt"));
  EXPECT_EQ(tok->decode(tok->encode("the red shirt")), "the red shirt");
}

}  // namespace
}  // namespace tisa::text
