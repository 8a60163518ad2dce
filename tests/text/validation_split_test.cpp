// prep::choose_validation_documents: whole documents, by share of text, seeded (hand-computed cases).
#include <gtest/gtest.h>

#include <numeric>

#include "prep/validation_split.h"

using tisa::prep::choose_validation_documents;

namespace {

int64_t held_bytes(const std::vector<int64_t>& sizes, const std::vector<uint8_t>& held) {
  int64_t sum = 0;
  for (size_t d = 0; d < sizes.size(); ++d) sum += held[d] ? sizes[d] : 0;
  return sum;
}

}  // namespace

TEST(ValidationSplit, TakesTheShareOfTextAndLeavesALargeDocumentInTraining) {
  // One document of 100,000 bytes beside 100 of 1,000: 10 % of 200,000 is 20 small documents,
  // whatever the seed; the large one (half the text) is never held out.
  std::vector<int64_t> sizes(101, 1000);
  sizes[37] = 100000;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const auto held = choose_validation_documents(sizes, 0.1, seed);
    EXPECT_EQ(held[37], 0) << "seed " << seed;
    EXPECT_EQ(held_bytes(sizes, held), 20000) << "seed " << seed;
    EXPECT_EQ(std::accumulate(held.begin(), held.end(), 0), 20) << "seed " << seed;
  }
}

TEST(ValidationSplit, FillsTheBudgetWithSmallerDocumentsAfterALargeOne) {
  // Budget 25 % of 4,000 = 1,000: whichever document comes first in key order, the rest of the
  // budget is filled by documents that still fit, and it is never exceeded.
  const std::vector<int64_t> sizes = {600, 500, 400, 300, 200, 2000};
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const auto held = choose_validation_documents(sizes, 0.25, seed);
    const int64_t used = held_bytes(sizes, held);
    EXPECT_LE(used, 1000) << "seed " << seed;
    for (size_t d = 0; d < sizes.size(); ++d)  // no document left in training would still fit
      if (!held[d]) {
        EXPECT_GT(used + sizes[d], 1000) << "seed " << seed << ", document " << d;
      }
    EXPECT_EQ(held[5], 0) << "seed " << seed;
  }
}

TEST(ValidationSplit, IsDeterministicFromTheSeed) {
  std::vector<int64_t> sizes(200);
  for (size_t d = 0; d < sizes.size(); ++d) sizes[d] = 100 + static_cast<int64_t>(d * 37 % 900);
  EXPECT_EQ(choose_validation_documents(sizes, 0.05, 7), choose_validation_documents(sizes, 0.05, 7));
  EXPECT_NE(choose_validation_documents(sizes, 0.05, 7), choose_validation_documents(sizes, 0.05, 8));
}

TEST(ValidationSplit, EveryDocumentLargerThanTheBudgetHoldsOutTheSmallest) {
  // 1 % of 1,600 is 16 bytes: nothing fits, so the smallest document (index 1) is the split.
  const auto held = choose_validation_documents({500, 300, 800}, 0.01, 1);
  EXPECT_EQ(held, (std::vector<uint8_t>{0, 1, 0}));
}

TEST(ValidationSplit, KeepsATrainingDocument) {
  // 99 % of 101 bytes fits the 100-byte document and not also the 1-byte one, or the reverse;
  // either way one document is trained on.
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const auto held = choose_validation_documents({1, 100}, 0.99, seed);
    EXPECT_EQ(held[0] + held[1], 1) << "seed " << seed;
  }
  const auto three = choose_validation_documents({1, 1, 1}, 0.99, 3);  // budget 2 bytes
  EXPECT_EQ(three[0] + three[1] + three[2], 2);
}

TEST(ValidationSplit, NoFractionOrOneDocumentHoldsOutNothing) {
  EXPECT_EQ(choose_validation_documents({10, 20, 30}, 0.0, 1), (std::vector<uint8_t>{0, 0, 0}));
  EXPECT_EQ(choose_validation_documents({10}, 0.5, 1), (std::vector<uint8_t>{0}));
  // Empty documents hold nothing to evaluate and are never the split.
  EXPECT_EQ(choose_validation_documents({0, 0, 50, 50}, 0.5, 1)[0], 0);
}
