// Pretraining batch loader: collation, determinism for any worker count, exact resume from a data
// position, sharding over ranks and the end of a non-looping (evaluation) pass.
#include <gtest/gtest.h>

#include <set>

#include "common/error.h"
#include "data/pretrain_loader.h"
#include "data/pretrain_test_util.h"
#include "support/test_paths.h"

using namespace tisa;
using data::DataPosition;
using data::LoaderOptions;
using data::PretrainBatch;
using data::PretrainBatchLoader;

namespace {

// 30 documents of 3..8 sentences of 3..10 one- or two-piece words.
std::shared_ptr<const data::ExampleBuilder> small_builder(int64_t max_len = 32) {
  static std::shared_ptr<const data::PretrainDataset> ds = [] {
    int32_t next = 5;
    std::vector<data::DocumentTokens> docs;
    for (int d = 0; d < 30; ++d) {
      data::DocumentTokens doc;
      for (int s = 0; s < 3 + d % 6; ++s) doc.push_back(test::toy_sentence(3 + (d + s) % 8, 1 + s % 2, next, 1000));
      docs.push_back(doc);
    }
    return test::write_toy_dataset(test::make_temp_dir("pretrain_loader"), docs, /*valid_every=*/5, 1000);
  }();
  data::ExampleOptions o;
  o.max_seq_length = max_len;
  o.max_predictions_per_seq = 5;
  o.seed = 3;
  return std::make_shared<data::ExampleBuilder>(ds, "train", o);
}

bool same(const PretrainBatch& a, const PretrainBatch& b) {
  return a.batch_size == b.batch_size && a.seq_len == b.seq_len && a.input_ids == b.input_ids &&
         a.token_type_ids == b.token_type_ids && a.attention_mask == b.attention_mask &&
         a.masked_positions == b.masked_positions && a.masked_labels == b.masked_labels &&
         a.sop_labels == b.sop_labels && a.position == b.position && a.next_position == b.next_position;
}

std::vector<PretrainBatch> take(PretrainBatchLoader& l, int n) {
  std::vector<PretrainBatch> out;
  PretrainBatch b;
  for (int i = 0; i < n && l.next(b); ++i) out.push_back(b);
  return out;
}

}  // namespace

TEST(PretrainLoaderTest, CollatePadsAndFlattensMaskedPositions) {
  data::PretrainExample a, b;
  a.input_ids = {2, 10, 3, 11, 3};
  a.token_type_ids = {0, 0, 0, 1, 1};
  a.masked_positions = {1};
  a.masked_labels = {12};
  a.sop_label = 1;
  b.input_ids = {2, 10, 3, 4, 13, 3};
  b.token_type_ids = {0, 0, 0, 1, 1, 1};
  b.masked_positions = {3, 4};
  b.masked_labels = {14, 13};
  const auto batch = data::collate({a, b}, 0);
  EXPECT_EQ(batch.batch_size, 2);
  EXPECT_EQ(batch.seq_len, 6);
  EXPECT_EQ(batch.input_ids, (std::vector<int64_t>{2, 10, 3, 11, 3, 0, 2, 10, 3, 4, 13, 3}));
  EXPECT_EQ(batch.token_type_ids, (std::vector<int64_t>{0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(batch.attention_mask, (std::vector<int64_t>{1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(batch.masked_positions, (std::vector<int64_t>{1, 9, 10}));
  EXPECT_EQ(batch.masked_labels, (std::vector<int64_t>{12, 14, 13}));
  EXPECT_EQ(batch.sop_labels, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(batch.lengths, (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(batch.num_tokens, 11);
  EXPECT_EQ(data::collate({a}, 0, 8).seq_len, 8);
  EXPECT_THROW(data::collate({b}, 0, 4), Error);
}

TEST(PretrainLoaderTest, SameBatchesForAnyWorkerCountAcrossEpochs) {
  auto builder = small_builder();
  const int64_t per_epoch = builder->num_examples(0);
  ASSERT_GT(per_epoch, 20);
  const int n = static_cast<int>(3 * per_epoch / 7 + 2);  // crosses two epoch boundaries
  LoaderOptions o;
  o.batch_size = 7;
  o.workers = 0;
  PretrainBatchLoader l0(builder, o);
  const auto ref = take(l0, n);
  ASSERT_EQ(static_cast<int>(ref.size()), n);
  EXPECT_GE(ref.back().position.epoch, 2);
  for (int workers : {1, 3}) {
    o.workers = workers;
    o.prefetch_batches = 2;
    PretrainBatchLoader l(builder, o);
    const auto got = take(l, n);
    ASSERT_EQ(got.size(), ref.size());
    for (int i = 0; i < n; ++i) ASSERT_TRUE(same(got[i], ref[i])) << "batch " << i << " workers " << workers;
  }
  // the position reported is that of the next batch
  EXPECT_EQ(ref[1].position, ref[0].next_position);
}

TEST(PretrainLoaderTest, ResumesExactlyFromPosition) {
  auto builder = small_builder();
  LoaderOptions o;
  o.batch_size = 5;
  o.workers = 2;
  PretrainBatchLoader a(builder, o);
  take(a, 9);
  const DataPosition pos = a.position();
  const auto continued = take(a, 6);
  // from JSON, as a checkpoint would store it
  PretrainBatchLoader b(builder, o, DataPosition::from_json(nlohmann::json::parse(pos.to_json().dump())));
  const auto resumed = take(b, 6);
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(same(continued[i], resumed[i])) << i;
  a.seek(pos);
  const auto again = take(a, 6);
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(same(continued[i], again[i])) << i;
  EXPECT_THROW(DataPosition::from_json({{"epoch", -1}, {"index", 0}}), Error);
  EXPECT_THROW(DataPosition::from_json(nlohmann::json::array()), Error);
}

// Issue 18, class 10: an evaluation pass over W ranks counts every example exactly once, also
// the n mod W that do not fill a round (they used to be dropped: 42 of 43 evaluated).
TEST(PretrainLoaderTest, RanksShareTheEpochWithoutOverlap) {
  auto builder = small_builder();
  const int64_t n = builder->num_examples(0);
  ASSERT_NE(n % 3, 0) << "the test needs a remainder";
  LoaderOptions o;
  o.batch_size = 3;
  o.world_size = 3;
  o.loop = false;
  std::multiset<std::vector<int64_t>> seen;
  std::vector<DataPosition> ends;
  for (int64_t r = 0; r < 3; ++r) {
    o.rank = r;
    PretrainBatchLoader l(builder, o);
    PretrainBatch b;
    while (l.next(b)) {
      for (int64_t i = 0; i < b.batch_size; ++i)
        seen.insert(std::vector<int64_t>(b.input_ids.begin() + i * b.seq_len,
                                         b.input_ids.begin() + i * b.seq_len + b.lengths[i]));
    }
    ends.push_back(l.position());
  }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), n);
  EXPECT_TRUE(ends[0] == ends[1] && ends[1] == ends[2]);
  // the single-rank epoch holds the same examples (masks included)
  std::multiset<std::vector<int64_t>> all;
  o.rank = 0;
  o.world_size = 1;
  o.batch_size = 4;
  PretrainBatchLoader l(builder, o);
  PretrainBatch b;
  while (l.next(b))
    for (int64_t i = 0; i < b.batch_size; ++i)
      all.insert(std::vector<int64_t>(b.input_ids.begin() + i * b.seq_len, b.input_ids.begin() + i * b.seq_len + b.lengths[i]));
  EXPECT_EQ(static_cast<int64_t>(all.size()), n);
  EXPECT_EQ(seen, all);  // the same examples, each once
}

TEST(PretrainLoaderTest, NonLoopingPassEndsWithPartialBatch) {
  auto builder = small_builder();
  const int64_t n = builder->num_examples(0);
  LoaderOptions o;
  o.batch_size = 8;
  o.loop = false;
  o.workers = 2;
  PretrainBatchLoader l(builder, o);
  int64_t total = 0;
  PretrainBatch b;
  int batches = 0;
  while (l.next(b)) total += b.batch_size, ++batches;
  EXPECT_EQ(total, n);
  EXPECT_EQ(batches, (n + 7) / 8);
  EXPECT_FALSE(l.next(b));
  EXPECT_EQ(l.position(), (DataPosition{0, n}));
}

TEST(PretrainLoaderTest, PadToMaxLengthAndBadOptions) {
  auto builder = small_builder(24);
  LoaderOptions o;
  o.batch_size = 2;
  o.pad_to_max_length = true;
  PretrainBatchLoader l(builder, o);
  PretrainBatch b;
  ASSERT_TRUE(l.next(b));
  EXPECT_EQ(b.seq_len, 24);
  EXPECT_EQ(static_cast<int64_t>(b.input_ids.size()), 48);
  o.rank = 2;
  o.world_size = 2;
  EXPECT_THROW(PretrainBatchLoader(builder, o), Error);
}
