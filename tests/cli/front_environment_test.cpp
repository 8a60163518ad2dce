// The settings `tisa-train` (the front) makes for the LibTorch process it starts: ATen's AVX-512
// kernels on a CPU with AVX-512, unless the user chose a kernel set. Debian's LibTorch 1.13 ran its
// AVX2 kernels on this project's AVX-512 Xeon (docs/perf/README.md, "ATen's kernel set and the
// GELU form"). Read back through `tisa-train version`.
#include <gtest/gtest.h>

#include <string>

#include "support/test_paths.h"

namespace {

// The line of `tisa-train version` that starts with `label`, run with `env_prefix` ("" = as the user has it).
std::string version_line(const std::string& env_prefix, const std::string& label) {
  const auto dir = tisa::test::make_temp_dir("front_env");
  const std::string out = dir + "/version.txt";
  const int rc = tisa::test::run(env_prefix + " " + tisa::test::bin_dir() + "/tisa-train version > " + out + " 2>&1");
  const std::string text = tisa::test::slurp(out);
  EXPECT_EQ(rc, 0) << text;
  const auto at = text.find(label);
  if (at == std::string::npos) return "missing in:\n" + text;
  return text.substr(at, text.find('\n', at) - at);
}

std::string aten_kernels_line(const std::string& env_prefix) { return version_line(env_prefix, "ATen CPU kernels"); }

bool cpu_has_avx512_for_aten() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

bool cpu_has_avx2() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

TEST(FrontEnvironment, AsksForAtenAvx512KernelsOnAnAvx512Cpu) {
  if (!cpu_has_avx512_for_aten()) GTEST_SKIP() << "this CPU has no AVX-512 (F/CD/BW/DQ/VL): ATen's own choice applies";
  EXPECT_EQ(aten_kernels_line("env -u ATEN_CPU_CAPABILITY"), "ATen CPU kernels AVX512");
}

TEST(FrontEnvironment, TheUsersAtenCpuCapabilityWins) {
  if (!cpu_has_avx2()) GTEST_SKIP() << "this CPU has no AVX2: no other kernel set to ask for";
  EXPECT_EQ(aten_kernels_line("ATEN_CPU_CAPABILITY=avx2"), "ATen CPU kernels AVX2");
}

// tisa-nn's allocator: tcmalloc, reached by malloc, where the build linked it; otherwise glibc's
// malloc with the settings that keep a step's freed buffers mapped (allocator_tuning.h).
TEST(FrontEnvironment, TheModelProcessRunsOnTheAllocatorTheBuildChose) {
  const std::string line = version_line("", "allocator");
#ifdef TISA_EXPECT_TCMALLOC
  EXPECT_EQ(line.rfind("allocator        gperftools ", 0), 0u) << line;
  EXPECT_EQ(line.find("does not reach it"), std::string::npos) << line;
#else
  EXPECT_EQ(line, "allocator        glibc malloc, freed memory kept for reuse");
#endif
}

}  // namespace
