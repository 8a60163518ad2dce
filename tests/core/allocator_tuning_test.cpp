// keep_freed_memory_for_reuse(): the buffers a "step" frees are reused by the next step without
// page faults. The step below is the pattern that faults under glibc's defaults: many blocks of
// a few MB alive together, then all freed, so the heap top exceeds the (dynamic) trim threshold
// and is handed back to the kernel — every later step faults its pages in again.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/allocator_tuning.h"

namespace {

long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// Ten 8 MB buffers written and freed: 20,480 pages touched per step.
void one_step() {
  std::vector<char*> buffers;
  for (int i = 0; i < 10; ++i) {
    auto* p = static_cast<char*>(std::malloc(8u << 20));
    ASSERT_NE(p, nullptr);
    std::memset(p, i + 1, 8u << 20);
    buffers.push_back(p);
  }
  for (char* p : buffers) std::free(p);
}

TEST(AllocatorTuning, RecognisesTheUsersMallocTunables) {
  EXPECT_TRUE(tisa::tunables_set_malloc("glibc.malloc.trim_threshold=1"));
  EXPECT_TRUE(tisa::tunables_set_malloc("glibc.cpu.hwcaps=-AVX:glibc.malloc.arena_max=2"));
  EXPECT_FALSE(tisa::tunables_set_malloc("glibc.cpu.hwcaps=-AVX"));
  EXPECT_FALSE(tisa::tunables_set_malloc(""));
}

TEST(AllocatorTuning, LaterStepsReuseTheFirstStepsPages) {
#if !defined(__GLIBC__)
  GTEST_SKIP() << "allocator tuning is for glibc only";
#else
  if (const char* t = std::getenv("GLIBC_TUNABLES"); t && tisa::tunables_set_malloc(t))
    GTEST_SKIP() << "GLIBC_TUNABLES sets malloc tunables here: " << t;
  ASSERT_EQ(tisa::keep_freed_memory_for_reuse(), tisa::AllocatorTuning::kApplied);
  one_step();  // the first step maps its pages
  const long before = minor_faults();
  for (int step = 0; step < 5; ++step) one_step();
  const long faults = minor_faults() - before;
  // Untuned glibc faults every page again: ~20,000 per step (> 100,000 here).
  EXPECT_LT(faults, 2000) << faults << " minor page faults in 5 steps after the first";
#endif
}

}  // namespace
