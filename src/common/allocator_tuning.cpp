#include "common/allocator_tuning.h"

#include <cstdlib>
#include <utility>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tisa {
namespace {
std::string& allocator_description_storage() {
  static std::string description = "unknown";
  return description;
}
}  // namespace

void set_allocator_description(std::string description) { allocator_description_storage() = std::move(description); }
const std::string& allocator_description() { return allocator_description_storage(); }

bool tunables_set_malloc(const std::string& glibc_tunables) {
  return glibc_tunables.find("glibc.malloc.") != std::string::npos;
}

AllocatorTuning keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  if (const char* tunables = std::getenv("GLIBC_TUNABLES"); tunables && tunables_set_malloc(tunables))
    return AllocatorTuning::kLeftToUser;
  // Setting any of these turns off glibc's dynamic mmap threshold, so all three are set together:
  // the trim threshold alone would pin the mmap threshold at its 128 kB default and make every
  // activation an mmap/munmap pair (docs/perf/README.md, "Allocator").
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
  mallopt(M_TOP_PAD, 64 * 1024 * 1024);
  return AllocatorTuning::kApplied;
#else
  return AllocatorTuning::kUnsupported;
#endif
}

}  // namespace tisa
