#pragma once
// What the CPU this process runs on can compute natively, where it decides a default.
//
// bf16 autocast is only worth having on a CPU with bf16 arithmetic: LibTorch sends bf16 matrix
// products to oneDNN when the CPU has AVX-512, and to a scalar fallback otherwise, an order of
// magnitude slower than fp32 (docs/perf/README.md, "bf16 on a CPU without native bf16").
#include <string>

namespace tisa {

struct CpuBf16Support {
  bool native = false;  // the CPU has AVX512_BF16 (bf16 dot products) and the OS saves AVX-512 state
  std::string why;      // one line for logs: what was found
};

// Read with CPUID / XGETBV once; the same answer for the whole process.
const CpuBf16Support& cpu_bf16_support();

// The CPU's name as the kernel reports it ("model name" in /proc/cpuinfo), or "unknown CPU".
std::string cpu_model_name();

}  // namespace tisa
