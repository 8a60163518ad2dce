// cpu_bf16_support(): the CPUID reading agrees with what the kernel reports for this CPU.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "common/cpu_features.h"

namespace {

// The "flags" line of /proc/cpuinfo (the kernel's own CPUID reading), or "" when there is none.
std::string kernel_cpu_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) return line.substr(line.find(':') + 1) + " ";
  return "";
}

bool has_flag(const std::string& flags, const std::string& flag) { return flags.find(" " + flag + " ") != std::string::npos; }

TEST(CpuFeatures, NativeBf16AgreesWithTheKernelsFlags) {
  const std::string flags = kernel_cpu_flags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags on this system";
  const auto& support = tisa::cpu_bf16_support();
  // The kernel lists avx512_bf16 only when it also enabled AVX-512 state, as the detector requires.
  EXPECT_EQ(support.native, has_flag(flags, "avx512_bf16")) << support.why << " | flags:" << flags;
  EXPECT_FALSE(support.why.empty());
  std::printf("[cpu] %s: native bf16 %s (%s)\n", tisa::cpu_model_name().c_str(), support.native ? "yes" : "no",
              support.why.c_str());
}

// The kernel lists amx_bf16 only when it also enabled the tile state; the vendor is its vendor_id.
TEST(CpuFeatures, FastBf16ProductsFollowTheKernelsAmxFlagAndVendor) {
  const std::string flags = kernel_cpu_flags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags on this system";
  std::ifstream in("/proc/cpuinfo");
  std::string line, vendor;
  while (vendor.empty() && std::getline(in, line))
    if (line.rfind("vendor_id", 0) == 0) vendor = line.substr(line.find_first_not_of(" \t", line.find(':') + 1));
  const auto& support = tisa::cpu_bf16_support();
  const bool amx = has_flag(flags, "amx_bf16") && has_flag(flags, "amx_tile");
  EXPECT_EQ(support.fast_products, tisa::bf16_products_outrun_fp32(support.native, amx, vendor))
      << support.why << " | vendor " << vendor << " | flags:" << flags;
  std::printf("[cpu] %s: bf16 products faster than f32: %s\n", vendor.c_str(), support.fast_products ? "yes" : "no");
}

TEST(CpuFeatures, ModelNameIsReported) {
  if (kernel_cpu_flags().empty()) GTEST_SKIP() << "no /proc/cpuinfo on this system";
  EXPECT_NE(tisa::cpu_model_name(), "unknown CPU");
  EXPECT_FALSE(tisa::cpu_model_name().empty());
}

}  // namespace
