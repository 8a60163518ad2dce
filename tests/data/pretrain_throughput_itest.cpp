// Throughput of the pretraining example builder + batch loader (SPEC §5 data path) on real text
// (all Gutenberg books + WikiText-2 raw through the word-level stand-in tokenizer): examples/s and
// tokens/s at max_seq_length 512, batch 32, with 1 and 2 worker threads. The trainer consumes
// ~300 tokens/s (albert-base on 2 cores); require ≥ 10× that.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "data/pretrain_loader.h"
#include "data/pretrain_test_util.h"
#include "support/test_paths.h"

using namespace tisa;

TEST(PretrainThroughput, BuilderAndLoader) {
  TISA_REQUIRE_SHARED("data/corpus/wikitext-2-raw/wiki.test.raw");
  std::vector<data::DocumentTokens> docs;
  for (const char* f : {"data/corpus/wikitext-2-raw/wiki.test.raw", "data/corpus/wikitext-2-raw/wiki.valid.raw"})
    for (auto& d : test::toy_wikitext_documents(test::shared_path(f))) docs.push_back(std::move(d));
  auto ds = test::write_toy_dataset(test::make_temp_dir("pretrain_tp"), docs);
  data::ExampleOptions o;
  o.max_seq_length = 512;
  o.max_predictions_per_seq = 20;
  auto builder = std::make_shared<data::ExampleBuilder>(ds, "train", o);
  std::printf("dataset: %lld tokens, %lld examples/epoch at L=512\n", (long long)ds->split("train").num_tokens(),
              (long long)builder->num_examples(0));
  for (int workers : {0, 1, 2}) {
    data::LoaderOptions lo;
    lo.batch_size = 32;
    lo.workers = workers;
    data::PretrainBatchLoader loader(builder, lo);
    data::PretrainBatch b;
    int64_t examples = 0, tokens = 0;
    const auto t0 = std::chrono::steady_clock::now();
    double secs = 0;
    while (secs < 1.5) {
      ASSERT_TRUE(loader.next(b));
      examples += b.batch_size;
      tokens += b.num_tokens;
      secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    std::printf("workers %d: %.0f examples/s, %.0f tokens/s\n", workers, examples / secs, tokens / secs);
    EXPECT_GT(tokens / secs, 3000.0);
  }
}
