// train::count_top1_hits equals logits.argmax(-1).eq(labels).sum() — the accuracy count it
// replaces — on random logits, on bf16-rounded logits full of ties (argmax takes the first
// maximum: a label at a later tied maximum is a miss) and on hand-made rows.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "train/pretrain_step.h"

namespace {

int64_t by_argmax(const torch::Tensor& logits, const torch::Tensor& labels) {
  return logits.argmax(-1).eq(labels).sum().item<int64_t>();
}

TEST(Top1Hits, HandMadeRowsWithTies) {
  // Row 0: single maximum at 2 (label 2: hit). Row 1: tie at 0 and 3, label 3: argmax says 0 (miss).
  // Row 2: the same tie, label 0 (hit). Row 3: all equal, label 1 (miss: argmax is 0). Row 4: label
  // not at the maximum (miss).
  auto logits = torch::tensor({0.1f, 0.2f, 0.9f, 0.3f,  //
                               0.7f, 0.2f, 0.1f, 0.7f,  //
                               0.7f, 0.2f, 0.1f, 0.7f,  //
                               0.5f, 0.5f, 0.5f, 0.5f,  //
                               0.1f, 0.8f, 0.2f, 0.3f})
                    .view({5, 4});
  auto labels = torch::tensor({2, 3, 0, 1, 0}, torch::kLong);
  EXPECT_EQ(tisa::train::count_top1_hits(logits, labels).item<int64_t>(), 2);
  EXPECT_EQ(by_argmax(logits, labels), 2);
  // No label at its row's maximum: no row is even a candidate.
  auto misses = torch::tensor({0, 1, 1, 1, 0}, torch::kLong);
  EXPECT_EQ(tisa::train::count_top1_hits(logits, misses).item<int64_t>(), 0);
  EXPECT_EQ(by_argmax(logits, misses), 0);
}

TEST(Top1Hits, EqualsArgmaxOnRandomAndTiedLogits) {
  torch::manual_seed(7);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t n = 1 + trial * 31, c = trial % 2 ? 4000 : 2;
    auto logits = torch::randn({n, c});
    // Half the trials: bf16-rounded coarse values, so that many rows have tied maxima.
    if (trial % 4 >= 2) logits = (logits * 2).round().to(torch::kBFloat16).to(torch::kFloat);
    auto labels = torch::randint(c, {n}, torch::kLong);
    // Aim some labels at the maximum so that hits are counted, not only misses.
    auto first_max = logits.argmax(-1);
    labels.index_put_({torch::arange(n) % 3 == 0}, first_max.index({torch::arange(n) % 3 == 0}));
    EXPECT_EQ(tisa::train::count_top1_hits(logits, labels).item<int64_t>(), by_argmax(logits, labels))
        << "trial " << trial << " (" << n << " x " << c << ")";
  }
}

TEST(Top1Hits, NoRows) {
  auto logits = torch::zeros({0, 4000});
  auto labels = torch::zeros({0}, torch::kLong);
  EXPECT_EQ(tisa::train::count_top1_hits(logits, labels).item<int64_t>(), 0);
}

}  // namespace
