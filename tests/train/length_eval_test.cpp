// Length extrapolation evaluation (src/train/length_eval.h): lengths past an absolute table are
// reported as n/a instead of running; relative schemes give numbers at every length; all models
// see the same examples at a given length; the masking rate stays near masked_lm_prob.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "common/error.h"
#include "data/pretrain_dataset.h"
#include "data/pretrain_test_util.h"
#include "model/albert.h"
#include "support/test_paths.h"
#include "train/length_eval.h"

namespace tisa::train {
namespace {

constexpr int64_t kVocab = 200;

config::ModelConfig tiny_model(bool absolute, std::string relative) {
  config::ModelConfig c;
  c.vocab_size = kVocab;
  c.embedding_size = 16;
  c.hidden_size = 32;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 64;
  c.max_position_embeddings = 32;
  c.position.absolute = absolute;
  c.position.relative = relative;
  return c;
}

// Eight documents of 30 sentences of 6 one-piece words; every fourth document is valid.
std::shared_ptr<const data::PretrainDataset> toy_dataset() {
  std::vector<data::DocumentTokens> docs;
  int32_t next = 5;
  for (int d = 0; d < 8; ++d) {
    data::DocumentTokens doc;
    for (int s = 0; s < 30; ++s) doc.push_back(test::toy_sentence(6, 1, next, static_cast<int32_t>(kVocab)));
    docs.push_back(doc);
  }
  return test::write_toy_dataset(test::make_temp_dir("length_eval"), docs, /*valid_every=*/4, kVocab);
}

LengthEvalOptions options(std::vector<int64_t> lengths) {
  LengthEvalOptions o;
  o.seq_lengths = std::move(lengths);
  o.batch_size = 4;
  return o;
}

TEST(LengthEval, ReasonOnlyForAbsolutePastTheTable) {
  auto abs = tiny_model(true, "none");
  EXPECT_EQ(length_unavailable_reason(abs, 32), "");
  EXPECT_EQ(length_unavailable_reason(abs, 33), "n/a: absolute table has 32 rows");
  auto abs_tisa = tiny_model(true, "tisa");
  EXPECT_EQ(length_unavailable_reason(abs_tisa, 64), "n/a: absolute table has 32 rows");
  EXPECT_EQ(length_unavailable_reason(tiny_model(false, "tisa"), 4096), "");
  EXPECT_EQ(length_unavailable_reason(tiny_model(false, "shaw"), 4096), "");
  EXPECT_EQ(length_unavailable_reason(tiny_model(false, "none"), 4096), "");
}

TEST(LengthEval, AbsoluteBeyondTableIsNotAvailableAndTisaGivesNumbers) {
  auto dataset = toy_dataset();
  torch::manual_seed(1);
  const auto abs_cfg = tiny_model(true, "none");
  model::AlbertForPreTraining abs(abs_cfg);
  const auto tisa_cfg = tiny_model(false, "tisa");
  model::AlbertForPreTraining tisa(tisa_cfg);

  const auto o = options({16, 32, 64});
  auto a = evaluate_lengths(abs, abs_cfg, dataset, o, torch::kCPU);
  auto t = evaluate_lengths(tisa, tisa_cfg, dataset, o, torch::kCPU);
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_TRUE(a[0].available);
  EXPECT_TRUE(a[1].available);
  EXPECT_FALSE(a[2].available);
  EXPECT_EQ(a[2].reason, "n/a: absolute table has 32 rows");
  EXPECT_EQ(a[2].result.examples, 0);
  for (const auto& r : t) {
    EXPECT_TRUE(r.available) << r.seq_length;
    EXPECT_TRUE(std::isfinite(r.result.mlm_loss)) << r.seq_length;
    // An untrained model over 200 ids: loss near ln(200) ≈ 5.3.
    EXPECT_GT(r.result.mlm_loss, 3.0);
    EXPECT_LT(r.result.mlm_loss, 8.0);
    EXPECT_GT(r.result.examples, 0);
    // Masking rate close to 15% of the tokens at every length (budget round(0.15 * length)).
    const double rate = static_cast<double>(r.result.predictions) / static_cast<double>(r.tokens);
    EXPECT_GT(rate, 0.10) << r.seq_length;
    EXPECT_LT(rate, 0.20) << r.seq_length;
  }
  // Longer examples: fewer of them over the same documents; the whole split at each length.
  EXPECT_GT(t[0].result.examples, t[1].result.examples);
  EXPECT_GT(t[1].result.examples, t[2].result.examples);
  // No short sequences: examples fill most of the length (only documents' last chunks are shorter).
  for (const auto& r : t) {
    EXPECT_LE(r.tokens, r.result.examples * r.seq_length) << r.seq_length;
    EXPECT_GT(r.tokens, 0.7 * static_cast<double>(r.result.examples * r.seq_length)) << r.seq_length;
  }
  // Both models saw the same examples and masks at the lengths both can take.
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(a[i].result.examples, t[i].result.examples);
    EXPECT_EQ(a[i].result.predictions, t[i].result.predictions);
    EXPECT_EQ(a[i].tokens, t[i].tokens);
  }
  // Deterministic: a second pass gives the same numbers.
  auto t2 = evaluate_lengths(tisa, tisa_cfg, dataset, o, torch::kCPU);
  for (size_t i = 0; i < t.size(); ++i) EXPECT_DOUBLE_EQ(t[i].result.mlm_loss, t2[i].result.mlm_loss);
}

TEST(LengthEval, JsonAndTable) {
  std::vector<LengthEvalRow> rows(2);
  rows[0].seq_length = 64;
  rows[0].result.mlm_loss = 2.5;
  rows[0].result.examples = 10;
  rows[1].seq_length = 256;
  rows[1].available = false;
  rows[1].reason = "n/a: absolute table has 128 rows";
  auto j = length_rows_to_json(rows);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["seq_length"], 64);
  EXPECT_DOUBLE_EQ(j[0]["mlm_loss"].get<double>(), 2.5);
  EXPECT_FALSE(j[0].contains("reason"));
  EXPECT_EQ(j[1]["available"], false);
  EXPECT_EQ(j[1]["reason"], "n/a: absolute table has 128 rows");
  EXPECT_FALSE(j[1].contains("mlm_loss"));
  const std::string table = format_length_table(rows);
  EXPECT_NE(table.find("n/a: absolute table has 128 rows"), std::string::npos);
  EXPECT_NE(table.find("2.5000"), std::string::npos);
}

TEST(LengthEval, Errors) {
  auto dataset = toy_dataset();
  const auto cfg = tiny_model(false, "tisa");
  model::AlbertForPreTraining m(cfg);
  EXPECT_THROW(evaluate_lengths(m, cfg, dataset, options({}), torch::kCPU), Error);
  EXPECT_THROW(evaluate_lengths(m, cfg, dataset, options({4}), torch::kCPU), Error);
  auto small_vocab = cfg;
  small_vocab.vocab_size = 100;  // the dataset has 200 ids
  EXPECT_THROW(evaluate_lengths(m, small_vocab, dataset, options({16}), torch::kCPU), Error);
}

}  // namespace
}  // namespace tisa::train
