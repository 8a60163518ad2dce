// training.precision auto: bf16 only where the device computes it natively; an explicit choice is
// kept; an unresolved auto cannot reach the model.
#include <gtest/gtest.h>

#include "common/cpu_features.h"
#include "config/config_loader.h"
#include "support/expect_error.h"
#include "train/precision_choice.h"

namespace {

using tisa::config::Precision;
using tisa::train::resolve_precision;

TEST(PrecisionChoice, AutoIsFp32OnACpuWithoutNativeBf16) {
  auto c = resolve_precision(Precision::kAuto, /*cuda=*/false, /*cpu_native_bf16=*/false, "no AVX-512");
  EXPECT_EQ(c.precision, Precision::kFp32);
  EXPECT_FALSE(c.slow_bf16);
  EXPECT_NE(c.why.find("no AVX-512"), std::string::npos) << c.why;
}

TEST(PrecisionChoice, AutoIsBf16OnANativeBf16CpuAndOnCuda) {
  EXPECT_EQ(resolve_precision(Precision::kAuto, false, true, "AVX512_BF16").precision, Precision::kBf16);
  EXPECT_EQ(resolve_precision(Precision::kAuto, true, false, "no AVX-512").precision, Precision::kBf16);
}

TEST(PrecisionChoice, AnExplicitChoiceIsKeptAndASlowBf16IsFlagged) {
  EXPECT_EQ(resolve_precision(Precision::kFp32, true, true, "").precision, Precision::kFp32);
  auto slow = resolve_precision(Precision::kBf16, false, false, "no AVX-512");
  EXPECT_EQ(slow.precision, Precision::kBf16);
  EXPECT_TRUE(slow.slow_bf16);
  EXPECT_FALSE(resolve_precision(Precision::kBf16, false, true, "AVX512_BF16").slow_bf16);
  EXPECT_FALSE(resolve_precision(Precision::kBf16, true, false, "no AVX-512").slow_bf16);
}

TEST(PrecisionChoice, ChoosePrecisionFollowsThisMachinesCpu) {
  const bool native = tisa::cpu_bf16_support().native;
  EXPECT_EQ(tisa::train::choose_precision(Precision::kAuto, c10::Device(c10::kCPU), "[test]"),
            native ? Precision::kBf16 : Precision::kFp32);
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
