// train::cpu_capability_from_config: ATen's kernel set as LibTorch's show_config() states it;
// train::flush_denormals_to_zero: subnormal floats become zero in this thread's arithmetic.
#include <gtest/gtest.h>

#include <ATen/Context.h>
#include <ATen/Version.h>
#include <torch/torch.h>

#include <limits>

#include "train/runtime_info.h"

namespace {

TEST(RuntimeInfo, CpuCapabilityIsReadFromShowConfig) {
  EXPECT_EQ(tisa::train::cpu_capability_from_config("PyTorch built with:\n  - GCC 12.2\n"
                                                    "  - CPU capability usage: AVX512\n  - Build settings: X\n"),
            "AVX512");
  EXPECT_EQ(tisa::train::cpu_capability_from_config("  - CPU capability usage: AVX2"), "AVX2");
  EXPECT_EQ(tisa::train::cpu_capability_from_config("  - CPU capability usage:   DEFAULT\r\n"), "DEFAULT");
  EXPECT_EQ(tisa::train::cpu_capability_from_config("PyTorch built with:\n  - GCC 12.2\n"), "unknown");
  EXPECT_EQ(tisa::train::cpu_capability_from_config("  - CPU capability usage:"), "unknown");
}

TEST(RuntimeInfo, ThisLibTorchStatesItsCpuCapability) {
  // Both supported LibTorch builds (1.13, 2.x) print the line; a later one that drops it would
  // turn `tisa-train version`'s "ATen CPU kernels" into "unknown" without this test.
  EXPECT_NE(tisa::train::runtime_info().aten_cpu_capability, "unknown") << at::show_config();
}

TEST(FlushDenormals, SubnormalInputsAndResultsBecomeZero) {
  const float tiny = std::numeric_limits<float>::denorm_min() * 1000.0f;  // subnormal
  auto t = torch::full({64}, tiny);
  ASSERT_GT((t * 1.0f).max().item<float>(), 0.0f) << "this thread already flushes subnormals";
  if (!tisa::train::flush_denormals_to_zero()) GTEST_SKIP() << "this CPU cannot flush subnormals";
  EXPECT_EQ((t * 1.0f).max().item<float>(), 0.0f);
  EXPECT_EQ((torch::full({64}, 1e-30f) * 1e-10f).max().item<float>(), 0.0f);  // a subnormal result
  EXPECT_GT((torch::full({64}, 1e-30f) * 1e-5f).max().item<float>(), 0.0f);   // normal results stay
  at::globalContext().setFlushDenormal(false);
}

}  // namespace
