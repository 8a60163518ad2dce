#pragma once
// What the CPU this process runs on can compute natively, where it decides a default.
//
// bf16 autocast is only worth having on a CPU with bf16 arithmetic: LibTorch sends bf16 matrix
// products to oneDNN when the CPU has AVX-512, and to a scalar fallback otherwise. Measured on
// the cpu paper scale's pretraining step (H 128, 32 x 128 tokens, 1 thread): an AMD EPYC (Zen 3,
// AVX2 only) ran bf16 11-18x slower than fp32 (785-996 against 11,000-16,200 tokens/s), where an
// Intel Xeon with avx512_bf16 ran bf16 at 27,500 tokens/s, 1.6-3x its fp32 matrix-product rate.
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
