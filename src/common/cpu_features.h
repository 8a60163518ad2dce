#pragma once
// What the CPU this process runs on can compute natively, where it decides a default.
//
// bf16 autocast is only worth having on a CPU with bf16 arithmetic: LibTorch sends bf16 matrix
// products to oneDNN when the CPU has AVX-512, and to a scalar fallback otherwise, an order of
// magnitude slower than fp32 (docs/perf/README.md, "bf16 on a CPU without native bf16").
#include <string>

namespace tisa {

struct CpuBf16Support {
  bool native = false;         // the CPU has AVX512_BF16 (bf16 dot products) and the OS saves AVX-512 state
  bool fast_products = false;  // its bf16 matrix products outrun its f32 ones (see bf16_products_outrun_fp32)
  std::string why;             // one line for logs: what was found
};

// Whether bf16 products beat f32 on a CPU with native bf16: with AMX-BF16 (tile products), or on an
// AMD core, where LibTorch's bf16 GEMM ran at ~2x its f32 GEMM (Zen 4: 196-208 against 94-100
// GFLOP/s; a GEMM rate, not an instruction-level one). An Intel core without AMX issues vdpbf16ps at
// the f32 FMA's flop rate (scripts/bench/dot_product_peak.c), so bf16 there only adds casts
// (docs/perf/README.md, "bf16 on Intel without AMX"). A rule on the instruction sets, not a timing,
// so that a run's precision is the same every time.
bool bf16_products_outrun_fp32(bool native, bool amx_bf16, const std::string& vendor);

// Read with CPUID / XGETBV once; the same answer for the whole process.
const CpuBf16Support& cpu_bf16_support();

// The CPU's name as the kernel reports it ("model name" in /proc/cpuinfo), or "unknown CPU".
std::string cpu_model_name();

}  // namespace tisa
