// Pretraining examples (SPEC §5): structure of [CLS] A [SEP] B [SEP], SOP pairs, whole-word
// n-gram masking statistics on real text (WikiText-2 through a word-level stand-in tokenizer),
// determinism and dynamic/static masking.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/error.h"
#include "data/pretrain_examples.h"
#include "data/pretrain_test_util.h"
#include "support/test_paths.h"

using namespace tisa;
using data::ExampleBuilder;
using data::ExampleOptions;
using data::PretrainExample;

namespace {

constexpr const char* kWiki = "data/corpus/wikitext-2-raw/wiki.valid.raw";

std::shared_ptr<const data::PretrainDataset> wiki_dataset() {
  static std::shared_ptr<const data::PretrainDataset> ds = [] {
    return test::write_toy_dataset(test::make_temp_dir("pretrain_wiki"),
                                   test::toy_wikitext_documents(test::shared_path(kWiki)));
  }();
  return ds;
}

ExampleOptions opts(int64_t max_len = 128, uint64_t seed = 7) {
  ExampleOptions o;
  o.max_seq_length = max_len;
  o.max_predictions_per_seq = 20;
  o.seed = seed;
  return o;
}

bool same(const PretrainExample& a, const PretrainExample& b) {
  return a.input_ids == b.input_ids && a.token_type_ids == b.token_type_ids &&
         a.masked_positions == b.masked_positions && a.masked_labels == b.masked_labels &&
         a.sop_label == b.sop_label;
}

// The example's tokens with the masked positions restored.
std::vector<int32_t> unmasked(const PretrainExample& e) {
  auto ids = e.input_ids;
  for (size_t k = 0; k < e.masked_positions.size(); ++k) ids[e.masked_positions[k]] = e.masked_labels[k];
  return ids;
}

void check_structure(const PretrainExample& e, const ExampleBuilder& b) {
  const auto& sp = b.special_ids();
  ASSERT_GE(e.length(), 5);
  ASSERT_LE(e.length(), b.options().max_seq_length);
  ASSERT_EQ(e.input_ids.front(), sp.cls);
  ASSERT_EQ(e.input_ids.back(), sp.sep);
  const auto ids = unmasked(e);
  int seps = 0;
  int64_t first_sep = -1;
  for (int64_t i = 0; i < e.length(); ++i)
    if (ids[i] == sp.sep) {
      ++seps;
      if (first_sep < 0) first_sep = i;
    }
  ASSERT_EQ(seps, 2);
  ASSERT_GE(first_sep, 2) << "segment A is empty";
  ASSERT_LE(first_sep, e.length() - 3) << "segment B is empty";
  for (int64_t i = 0; i < e.length(); ++i) ASSERT_EQ(e.token_type_ids[i], i <= first_sep ? 0 : 1) << i;
  ASSERT_LE(static_cast<int64_t>(e.masked_positions.size()), b.options().max_predictions_per_seq);
  ASSERT_TRUE(std::is_sorted(e.masked_positions.begin(), e.masked_positions.end()));
  ASSERT_EQ(std::adjacent_find(e.masked_positions.begin(), e.masked_positions.end()), e.masked_positions.end());
  ASSERT_TRUE(e.sop_label == 0 || e.sop_label == 1);
}

}  // namespace

TEST(PretrainExamplesTest, StructureOnRealText) {
  TISA_REQUIRE_SHARED(kWiki);
  auto builder = std::make_shared<ExampleBuilder>(wiki_dataset(), "train", opts(64));
  const int64_t n = builder->num_examples(0);
  ASSERT_GT(n, 1000);
  for (int64_t i = 0; i < n; i += 7) {
    SCOPED_TRACE(i);
    check_structure(builder->build(0, i), *builder);
    if (HasFatalFailure()) return;
  }
}

// Without truncation (long max_seq_length), A+B restored is the chunk's text, in order for
// sop_label 0 and with the two segments exchanged for sop_label 1.
TEST(PretrainExamplesTest, SegmentsAreTheChunkInOrderOrSwapped) {
  TISA_REQUIRE_SHARED(kWiki);
  ExampleBuilder b(wiki_dataset(), "train", opts(4096));
  auto plan = b.plan(0);
  const auto& split = b.split();
  for (int64_t i = 0; i < std::min<int64_t>(plan->size(), 300); ++i) {
    const auto e = b.build(*plan, i);
    const auto& c = plan->chunks[i];
    std::vector<int32_t> chunk;
    split.append_tokens(split.sentence_offsets()[c.first_sentence], split.sentence_offsets()[c.end_sentence], chunk);
    if (chunk.size() > 4096 - 3) continue;  // the last sentence overshot the target: truncated
    const auto ids = unmasked(e);
    const auto sep = std::find(ids.begin() + 1, ids.end(), b.special_ids().sep) - ids.begin();
    std::vector<int32_t> a(ids.begin() + 1, ids.begin() + sep), bb(ids.begin() + sep + 1, ids.end() - 1);
    std::vector<int32_t> joined = e.sop_label ? bb : a;
    joined.insert(joined.end(), (e.sop_label ? a : bb).begin(), (e.sop_label ? a : bb).end());
    ASSERT_EQ(joined, chunk) << "example " << i << " sop " << e.sop_label;
  }
}

TEST(PretrainExamplesTest, MaskingStatisticsOnRealText) {
  TISA_REQUIRE_SHARED(kWiki);
  ExampleBuilder b(wiki_dataset(), "train", opts(128));
  auto plan = b.plan(0);
  const auto& sp = b.special_ids();
  int64_t tokens = 0, masked = 0, as_mask = 0, kept = 0, random = 0, sop = 0, examples = 0;
  std::map<int, int64_t> ngrams;
  int64_t ngram_total = 0;
  for (int64_t i = 0; i < plan->size(); ++i) {
    const auto e = b.build(*plan, i);
    ++examples;
    tokens += e.length();
    sop += e.sop_label;
    for (int n : e.ngram_words) ++ngrams[n], ++ngram_total;
    for (size_t k = 0; k < e.masked_positions.size(); ++k) {
      const int32_t now = e.input_ids[e.masked_positions[k]], orig = e.masked_labels[k];
      ASSERT_FALSE(b.is_special(orig)) << "a special token was chosen for prediction";
      ++masked;
      if (now == sp.mask) ++as_mask;
      else if (now == orig) ++kept;
      else {
        ++random;
        ASSERT_FALSE(b.is_special(now)) << "random replacement drew a special id";
      }
    }
  }
  ASSERT_GT(examples, 1000);
  const double share = static_cast<double>(masked) / tokens;
  std::printf("examples %lld tokens %lld masked %.4f mask %.4f kept %.4f random %.4f sop %.4f n1 %.4f n2 %.4f n3 %.4f\n",
              (long long)examples, (long long)tokens, share, double(as_mask) / masked, double(kept) / masked,
              double(random) / masked, double(sop) / examples, double(ngrams[1]) / ngram_total,
              double(ngrams[2]) / ngram_total, double(ngrams[3]) / ngram_total);
  EXPECT_NEAR(share, 0.15, 0.01);
  EXPECT_NEAR(double(as_mask) / masked, 0.8, 0.01);
  EXPECT_NEAR(double(kept) / masked, 0.1, 0.01);
  EXPECT_NEAR(double(random) / masked, 0.1, 0.01);
  EXPECT_NEAR(double(sop) / examples, 0.5, 0.03);
  // Drawn n follows 6/11, 3/11, 2/11; n-grams of many-piece words that would overrun the
  // budget are shortened (here ~0.58/0.26/0.16), so allow ±0.04.
  EXPECT_NEAR(double(ngrams[1]) / ngram_total, 6.0 / 11, 0.04);
  EXPECT_NEAR(double(ngrams[2]) / ngram_total, 3.0 / 11, 0.04);
  EXPECT_NEAR(double(ngrams[3]) / ngram_total, 2.0 / 11, 0.04);
  EXPECT_EQ(ngrams.size(), 3u);
}

// Every masked word is masked whole: words of 3 pieces; a chosen position's word mates are chosen.
TEST(PretrainExamplesTest, WholeWordsAreMaskedTogether) {
  int32_t next = 5;
  std::vector<data::DocumentTokens> docs;
  for (int d = 0; d < 40; ++d) {
    data::DocumentTokens doc;
    for (int s = 0; s < 6; ++s) doc.push_back(test::toy_sentence(4 + s, 3, next));
    docs.push_back(doc);
  }
  auto ds = test::write_toy_dataset(test::make_temp_dir("pretrain_ww"), docs);
  ExampleOptions o = opts(256);
  o.max_predictions_per_seq = 60;
  ExampleBuilder b(ds, "train", o);
  int64_t checked = 0;
  for (int64_t epoch = 0; epoch < 3; ++epoch)
    for (int64_t i = 0; i < b.num_examples(epoch); ++i) {
      const auto e = b.build(epoch, i);
      std::set<int32_t> pos(e.masked_positions.begin(), e.masked_positions.end());
      const auto ids = unmasked(e);
      // toy ids within a word are consecutive; a word starts where (id - 5) % 3 == 0 in this layout
      for (int32_t p : e.masked_positions) {
        const int32_t k = (ids[p] - 5) % 3;  // piece index in its word
        for (int32_t q = p - k; q < p - k + 3; ++q) ASSERT_TRUE(pos.count(q)) << "partial word at " << p;
        ++checked;
      }
    }
  EXPECT_GT(checked, 1000);
}

// Unknown tokens inside sentences are never predicted, and n-grams do not reach across them.
TEST(PretrainExamplesTest, SpecialTokensInsideTextAreNeverMasked) {
  int32_t next = 5;
  std::vector<data::DocumentTokens> docs;
  for (int d = 0; d < 30; ++d) {
    data::DocumentTokens doc;
    for (int s = 0; s < 5; ++s) {
      auto sent = test::toy_sentence(12, 1 + s % 2, next);
      for (size_t i = 0; i < sent.ids.size(); i += 3)
        if (sent.word_start[i]) sent.ids[i] = 1;  // unk, a whole word
      doc.push_back(sent);
    }
    docs.push_back(doc);
  }
  auto ds = test::write_toy_dataset(test::make_temp_dir("pretrain_unk"), docs);
  ExampleOptions o = opts(64);
  o.masked_lm_prob = 0.4;
  ExampleBuilder b(ds, "train", o);
  int64_t masked = 0;
  for (int64_t epoch = 0; epoch < 4; ++epoch)
    for (int64_t i = 0; i < b.num_examples(epoch); ++i) {
      const auto e = b.build(epoch, i);
      for (int32_t label : e.masked_labels) ASSERT_FALSE(b.is_special(label)) << label;
      masked += static_cast<int64_t>(e.masked_labels.size());
    }
  EXPECT_GT(masked, 1000);
}

TEST(PretrainExamplesTest, TruncationKeepsBothSegmentsAndLimit) {
  TISA_REQUIRE_SHARED(kWiki);
  ExampleOptions o = opts(12);
  o.short_seq_prob = 0;
  ExampleBuilder b(wiki_dataset(), "train", o);
  for (int64_t i = 0; i < 500; ++i) {
    const auto e = b.build(0, i);
    check_structure(e, b);
    if (HasFatalFailure()) return;
  }
}

TEST(PretrainExamplesTest, ShortSequenceProbabilityShortensTargets) {
  TISA_REQUIRE_SHARED(kWiki);
  auto mean_len = [](double p) {
    ExampleOptions o = opts(128);
    o.short_seq_prob = p;
    ExampleBuilder b(wiki_dataset(), "train", o);
    double sum = 0;
    const int64_t n = b.num_examples(0);
    for (int64_t i = 0; i < n; ++i) sum += b.build(0, i).length();
    return sum / n;
  };
  const double full = mean_len(0.0), shortish = mean_len(1.0);
  EXPECT_GT(full, 110);  // most chunks reach the 125-token target
  EXPECT_LT(shortish, full * 0.75);
}

TEST(PretrainExamplesTest, DeterministicAndEpochDependent) {
  TISA_REQUIRE_SHARED(kWiki);
  ExampleBuilder b1(wiki_dataset(), "train", opts(128, 11));
  ExampleBuilder b2(wiki_dataset(), "train", opts(128, 11));
  ExampleBuilder other_seed(wiki_dataset(), "train", opts(128, 12));
  // any order of construction gives the same example
  const auto late = b2.build(3, 17);
  for (int64_t i : {0, 5, 17}) EXPECT_TRUE(same(b1.build(0, i), b2.build(0, i)));
  EXPECT_TRUE(same(b1.build(3, 17), late));
  // a different epoch or seed gives different examples almost everywhere
  int64_t equal_epoch = 0, equal_seed = 0;
  for (int64_t i = 0; i < 200; ++i) {
    equal_epoch += same(b1.build(0, i), b1.build(1, i));
    equal_seed += same(b1.build(0, i), other_seed.build(0, i));
  }
  EXPECT_LT(equal_epoch, 3);
  EXPECT_LT(equal_seed, 3);
  // dynamic masking: the same chunk is masked differently in another epoch (chunks with the
  // same sentence range in epochs 0 and 1)
  auto p0 = b1.plan(0), p1 = b1.plan(1);
  std::map<std::pair<int64_t, int64_t>, int64_t> where1;
  for (int64_t i = 0; i < p1->size(); ++i) where1[{p1->chunks[i].first_sentence, p1->chunks[i].end_sentence}] = i;
  int64_t common = 0, same_mask = 0;
  for (int64_t i = 0; i < p0->size() && common < 200; ++i) {
    auto it = where1.find({p0->chunks[i].first_sentence, p0->chunks[i].end_sentence});
    if (it == where1.end()) continue;
    ++common;
    same_mask += b1.build(*p0, i).masked_positions == b1.build(*p1, it->second).masked_positions;
  }
  EXPECT_GT(common, 50);
  EXPECT_LT(same_mask, common / 10);
}

TEST(PretrainExamplesTest, StaticMaskingCyclesDupeFactorVersions) {
  TISA_REQUIRE_SHARED(kWiki);
  ExampleOptions o = opts(128);
  o.static_masking = true;
  o.dupe_factor = 3;
  ExampleBuilder b(wiki_dataset(), "train", o);
  auto by_id = [&](int64_t epoch) {
    auto plan = b.plan(epoch);
    std::map<int64_t, PretrainExample> m;
    for (int64_t i = 0; i < plan->size(); ++i) m.emplace(plan->chunks[i].id, b.build(*plan, i));
    return m;
  };
  const auto e0 = by_id(0), e1 = by_id(1), e3 = by_id(3);
  ASSERT_EQ(e0.size(), e3.size());
  for (const auto& [id, ex] : e0) ASSERT_TRUE(same(ex, e3.at(id))) << "epoch 3 must repeat epoch 0's version";
  int64_t equal01 = 0;
  for (const auto& [id, ex] : e0) equal01 += e1.count(id) && same(ex, e1.at(id));
  EXPECT_LT(equal01, static_cast<int64_t>(e0.size()) / 20);
  // each epoch has its own order
  EXPECT_NE(b.plan(0)->chunks[0].id * 1000003 + b.plan(0)->chunks[1].id,
            b.plan(3)->chunks[0].id * 1000003 + b.plan(3)->chunks[1].id);
}

TEST(PretrainExamplesTest, OptionsAreValidated) {
  TISA_REQUIRE_SHARED(kWiki);
  ExampleOptions o = opts();
  o.masked_lm_prob = 1.5;
  EXPECT_THROW(ExampleBuilder(wiki_dataset(), "train", o), Error);
  o = opts(3);
  EXPECT_THROW(ExampleBuilder(wiki_dataset(), "train", o), Error);
  EXPECT_THROW(ExampleBuilder(wiki_dataset(), "train", opts()).build(0, 1 << 30), Error);
}
