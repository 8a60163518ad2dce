// Model-FLOPs accounting of `tisa-train bench` (the numerator of MFU), against a hand count.
#include <gtest/gtest.h>

#include "bench/bench.h"

namespace {

TEST(BenchModelFlops, MatchesAHandCount) {
  tisa::bench::ModelBenchSpec s;
  auto& c = s.model;
  c.hidden_size = 4;
  c.intermediate_size = 8;
  c.embedding_size = 2;
  c.vocab_size = 10;
  c.num_hidden_layers = 1;
  c.inner_group_num = 1;
  s.batch = 1;
  s.seq = 2;
  s.masked_per_seq = 1;
  s.mode = "forward";
  // Embedding projection 2·T·E·H = 2·2·2·4 = 32. Layer: 2·T·(4H² + 2HI) = 4·(64 + 64) = 512, plus
  // q·kᵀ and probs·v 2·2·B·L²·H = 64. MLM at one position 2·1·(H·E + E·V) = 56; pooler + SOP
  // 2·B·(H² + 2H) = 48. Forward 712; a training step is 3× that.
  EXPECT_DOUBLE_EQ(tisa::bench::model_flops(s), 712.0);
  s.mode = "train";
  EXPECT_DOUBLE_EQ(tisa::bench::model_flops(s), 3 * 712.0);
  s.mlm_all_positions = true;  // MLM at both positions: +56
  EXPECT_DOUBLE_EQ(tisa::bench::model_flops(s), 3 * 768.0);
}

}  // namespace
