// Model-FLOPs accounting of `tisa-train bench` (the numerator of MFU), against a hand count.
#include <gtest/gtest.h>

#include "bench/bench.h"

namespace {

// One sequence of `seq` positions, one of them masked, through a model of H 4, I 8, E 2, V 10 and
// one layer: small enough to count by hand.
tisa::bench::ModelBenchSpec tiny_forward(int64_t seq) {
  tisa::bench::ModelBenchSpec s;
  auto& c = s.model;
  c.hidden_size = 4;
  c.intermediate_size = 8;
  c.embedding_size = 2;
  c.vocab_size = 10;
  c.num_hidden_layers = 1;
  c.inner_group_num = 1;
  s.batch = 1;
  s.seq = seq;
  s.masked_per_seq = 1;
  s.mode = "forward";
  return s;
}

TEST(BenchModelFlops, MatchesAHandCount) {
  auto s = tiny_forward(2);
  // Embedding projection 2·T·E·H = 2·2·2·4 = 32. Layer: 2·T·(4H² + 2HI) = 4·(64 + 64) = 512, plus
  // q·kᵀ and probs·v 2·2·B·L²·H = 64. MLM at one position 2·1·(H·E + E·V) = 56; pooler + SOP
  // 2·B·(H² + 2H) = 48. Forward 712; a training step is 3× that.
  EXPECT_DOUBLE_EQ(tisa::bench::model_flops(s), 712.0);
  s.mode = "train";
  EXPECT_DOUBLE_EQ(tisa::bench::model_flops(s), 3 * 712.0);
  s.mlm_all_positions = true;  // MLM at both positions: +56
  EXPECT_DOUBLE_EQ(tisa::bench::model_flops(s), 3 * 768.0);
}

// The sparse final layer: 4 positions, 1 masked, so 2 rows neither predicted nor the pooler's.
TEST(BenchModelFlops, TheSparseFinalLayerCountsOnlyTheRowsItRuns) {
  auto s = tiny_forward(4);
  // Full: embedding projection 2·4·2·4 = 64; layer 2·4·(64 + 64) = 1024 and attention 2·2·16·4 =
  // 256; MLM 56; pooler + SOP 48: 1448. The 2 skipped rows save their output projection and FFN
  // 2·2·(16 + 64) = 320 and their queries' q·kᵀ and probs·v 2·2·(2·4·4) = 128: 1000.
  s.full_final_layer = true;
  EXPECT_DOUBLE_EQ(tisa::bench::model_flops(s), 1448.0);
  s.full_final_layer = false;
  EXPECT_DOUBLE_EQ(tisa::bench::model_flops(s), 1000.0);
}

}  // namespace
