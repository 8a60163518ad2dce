// prep::is_validation_document: whole documents decided by their own content (seeded), the long
// ones always trained on; order- and shard-independent by construction (properties below).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "prep/validation_split.h"

using namespace tisa::prep;

namespace {

std::vector<std::string> doc(int i) { return {"Document number " + std::to_string(i) + ".", "Second sentence."}; }

}  // namespace

TEST(ValidationSplit, ShareOfDocumentsIsTheFractionAndDecidedByContent) {
  const ValidationSplitRule rule{0.1, 7, 1 << 20};
  int held = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) held += is_validation_document(rule, document_content_hash(doc(i)), 100);
  // binomial(20000, 0.1): sd 42; 5 sd either side
  EXPECT_NEAR(held, n / 10, 210);
  // the same content gives the same answer, wherever and whenever it comes
  for (int i = 0; i < 200; ++i)
    EXPECT_EQ(is_validation_document(rule, document_content_hash(doc(i)), 100),
              is_validation_document(rule, document_content_hash(doc(i)), 100));
}

TEST(ValidationSplit, SeedChangesTheDrawAndLongDocumentsAlwaysTrain) {
  const ValidationSplitRule a{0.5, 1, 1000}, b{0.5, 2, 1000};
  int differ = 0, long_held = 0;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t h = document_content_hash(doc(i));
    differ += is_validation_document(a, h, 10) != is_validation_document(b, h, 10);
    long_held += is_validation_document(a, h, 1001);
  }
  EXPECT_GT(differ, 400);  // independent draws disagree half of the time
  EXPECT_LT(differ, 600);
  EXPECT_EQ(long_held, 0);
}

TEST(ValidationSplit, ZeroFractionAndEmptyDocumentsHoldNothingOut) {
  const uint64_t h = document_content_hash(doc(3));
  EXPECT_FALSE(is_validation_document({0.0, 1, 1 << 20}, h, 100));
  EXPECT_FALSE(is_validation_document({0.99, 1, 1 << 20}, h, 0));
}

TEST(ValidationSplit, ContentHashSeparatesSentences) {
  // {"ab"} and {"a", "b"} are different documents
  EXPECT_NE(document_content_hash({"ab"}), document_content_hash({"a", "b"}));
  EXPECT_NE(document_content_hash({"a", "b"}), document_content_hash({"b", "a"}));
}
