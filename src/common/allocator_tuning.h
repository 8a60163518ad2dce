#pragma once
// Keeps the C allocator from handing freed memory back to the kernel between training steps.
//
// A training step allocates and frees the same few hundred tensor buffers every time. glibc's
// defaults return large freed blocks to the kernel (munmap of blocks above the mmap threshold,
// trimming of the heap top), so the next step takes a page fault on every 4 kB page again, a
// large share of a small model's step (docs/perf/README.md, "Allocator").
#include <string>

namespace tisa {

enum class AllocatorTuning {
  kApplied,      // mallopt settings in force for the rest of the process
  kLeftToUser,   // GLIBC_TUNABLES names a glibc.malloc tunable: the user's choice wins
  kUnsupported,  // not glibc: nothing to do
};

// The settings: blocks up to 32 MB (glibc's largest allowed mmap threshold) come from the heap,
// the heap top is trimmed only above 1 GB, and the heap grows 64 MB at a time. Memory a step
// freed stays mapped for the next step; peak use is unchanged.
AllocatorTuning keep_freed_memory_for_reuse();

// What allocates the process's memory, as `version` and `bench` report it; set once at start-up
// by the executable's main() (tisa-nn links tcmalloc where the build found it, CMakeLists.txt).
void set_allocator_description(std::string description);
const std::string& allocator_description();  // "unknown" until set

// True when a GLIBC_TUNABLES value sets any glibc.malloc.* tunable.
bool tunables_set_malloc(const std::string& glibc_tunables);

}  // namespace tisa
