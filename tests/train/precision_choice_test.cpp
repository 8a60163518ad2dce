// training.precision auto: bf16 only where the device computes it faster than fp32; an explicit choice is
// kept; an unresolved auto cannot reach the model.
#include <gtest/gtest.h>

#include "common/cpu_features.h"
#include "config/config_loader.h"
#include "support/expect_error.h"
#include "train/precision_choice.h"

namespace {

using tisa::config::Precision;
using tisa::train::resolve_precision;

// The three kinds of CPU the rule tells apart, as cpu_features.cpp describes them.
const tisa::CpuBf16Support kNoBf16{false, false, "no AVX-512"};
const tisa::CpuBf16Support kBf16AtFp32Rate{true, false, "AVX512_BF16 without AMX on GenuineIntel"};
const tisa::CpuBf16Support kFastBf16{true, true, "AVX512_BF16 and AMX-BF16"};

TEST(PrecisionChoice, AutoIsFp32OnACpuWithoutNativeBf16) {
  auto c = resolve_precision(Precision::kAuto, /*cuda=*/false, kNoBf16);
  EXPECT_EQ(c.precision, Precision::kFp32);
  EXPECT_FALSE(c.slow_bf16);
  EXPECT_NE(c.why.find("no AVX-512"), std::string::npos) << c.why;
}

TEST(PrecisionChoice, AutoIsBf16WhereBf16ProductsOutrunFp32AndOnCuda) {
  EXPECT_EQ(resolve_precision(Precision::kAuto, false, kFastBf16).precision, Precision::kBf16);
  EXPECT_EQ(resolve_precision(Precision::kAuto, true, kNoBf16).precision, Precision::kBf16);
  EXPECT_EQ(resolve_precision(Precision::kAuto, true, kBf16AtFp32Rate).precision, Precision::kBf16);
}

TEST(PrecisionChoice, AutoIsFp32WhereNativeBf16ProductsRunNoFasterThanFp32) {
  auto c = resolve_precision(Precision::kAuto, false, kBf16AtFp32Rate);
  EXPECT_EQ(c.precision, Precision::kFp32);
  EXPECT_FALSE(c.slow_bf16);
  EXPECT_NE(c.why.find("without AMX"), std::string::npos) << c.why;
}

TEST(PrecisionChoice, AnExplicitChoiceIsKeptAndASlowBf16IsFlagged) {
  EXPECT_EQ(resolve_precision(Precision::kFp32, true, kFastBf16).precision, Precision::kFp32);
  auto slow = resolve_precision(Precision::kBf16, false, kNoBf16);
  EXPECT_EQ(slow.precision, Precision::kBf16);
  EXPECT_TRUE(slow.slow_bf16);
  EXPECT_FALSE(resolve_precision(Precision::kBf16, false, kFastBf16).slow_bf16);
  EXPECT_FALSE(resolve_precision(Precision::kBf16, true, kNoBf16).slow_bf16);
  auto no_faster = resolve_precision(Precision::kBf16, false, kBf16AtFp32Rate);
  EXPECT_EQ(no_faster.precision, Precision::kBf16);
  EXPECT_FALSE(no_faster.slow_bf16);
  EXPECT_NE(no_faster.why.find("fp32 is faster"), std::string::npos) << no_faster.why;
}

TEST(PrecisionChoice, Bf16ProductsOutrunFp32WithAmxOrOnAnAmdCore) {
  EXPECT_TRUE(tisa::bf16_products_outrun_fp32(true, true, "GenuineIntel"));
  EXPECT_TRUE(tisa::bf16_products_outrun_fp32(true, false, "AuthenticAMD"));
  EXPECT_FALSE(tisa::bf16_products_outrun_fp32(true, false, "GenuineIntel"));
  EXPECT_FALSE(tisa::bf16_products_outrun_fp32(false, true, "GenuineIntel"));
  EXPECT_FALSE(tisa::bf16_products_outrun_fp32(false, false, "AuthenticAMD"));
}

TEST(PrecisionChoice, ChoosePrecisionFollowsThisMachinesCpu) {
  const bool fast = tisa::cpu_bf16_support().fast_products;
  EXPECT_EQ(tisa::train::choose_precision(Precision::kAuto, c10::Device(c10::kCPU), "[test]"),
            fast ? Precision::kBf16 : Precision::kFp32);
}

TEST(PrecisionChoice, UnresolvedAutoCannotReachTheModel) {
  EXPECT_FALSE(tisa::train::uses_bf16(Precision::kFp32));
  EXPECT_TRUE(tisa::train::uses_bf16(Precision::kBf16));
  EXPECT_HAS(tisa::test::error_of([] { tisa::train::uses_bf16(Precision::kAuto); }), "unresolved");
}

TEST(PrecisionChoice, ConfigAcceptsAutoAndNamesTheChoicesOtherwise) {
  auto c = tisa::config::config_from_overrides({"training.precision=auto"});
  EXPECT_EQ(c.training.precision, Precision::kAuto);
  const std::string msg =
      tisa::test::error_of([] { tisa::config::config_from_overrides({"training.precision=fp16"}); });
  EXPECT_HAS(msg, "training.precision");
  EXPECT_HAS(msg, "auto");
}

}  // namespace
