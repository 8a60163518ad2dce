// train::cpu_capability_from_config: ATen's kernel set as LibTorch's show_config() states it.
#include <gtest/gtest.h>

#include <ATen/Version.h>

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

}  // namespace
