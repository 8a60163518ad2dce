// CPUID-based detection of native bf16 arithmetic; see cpu_features.h.
#include "common/cpu_features.h"

#include <fstream>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace tisa {
namespace {

#if defined(__x86_64__) || defined(__i386__)
// XCR0 bits the OS sets when it saves the registers on a context switch: SSE, AVX, and the three
// AVX-512 states (opmask, upper halves of ZMM0-15, ZMM16-31). Without them AVX-512 faults.
constexpr unsigned long long kAvx512OsState = (1ull << 1) | (1ull << 2) | (1ull << 5) | (1ull << 6) | (1ull << 7);

unsigned long long read_xcr0() {
  unsigned int lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<unsigned long long>(hi) << 32) | lo;
}

// XCR0 bits of the AMX tile configuration and tile data: set when the OS supports AMX.
constexpr unsigned long long kAmxOsState = (1ull << 17) | (1ull << 18);

// "GenuineIntel", "AuthenticAMD", ...: CPUID leaf 0 spells it in EBX, EDX, ECX.
std::string cpu_vendor() {
  unsigned int eax = 0, regs[3] = {0, 0, 0};
  if (!__get_cpuid(0, &eax, &regs[0], &regs[2], &regs[1])) return "";
  return std::string(reinterpret_cast<const char*>(regs), sizeof(regs));
}

CpuBf16Support detect() {
  unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) || !(ebx & (1u << 16)))  // AVX512F
    return {false, false, "no AVX-512"};
  const unsigned int max_subleaf = eax;
  const bool amx_cpuid = (edx & (1u << 22)) && (edx & (1u << 24));  // AMX-BF16, AMX-TILE
  if (max_subleaf < 1 || !__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) || !(eax & (1u << 5)))  // AVX512_BF16
    return {false, false, "AVX-512 without AVX512_BF16"};
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27)))  // OSXSAVE: XGETBV usable
    return {false, false, "AVX512_BF16, but the OS does not expose AVX state (no OSXSAVE)"};
  const unsigned long long xcr0 = read_xcr0();
  if ((xcr0 & kAvx512OsState) != kAvx512OsState)
    return {false, false, "AVX512_BF16, but the OS does not enable AVX-512 state"};
  const bool amx = amx_cpuid && (xcr0 & kAmxOsState) == kAmxOsState;
  const std::string vendor = cpu_vendor();
  const bool fast = bf16_products_outrun_fp32(true, amx, vendor);
  std::string why = amx ? "AVX512_BF16 and AMX-BF16" : "AVX512_BF16 without AMX";
  if (!amx) why += fast ? " on " + vendor + ": bf16 GEMMs measured at ~2x f32 on this vendor's cores (Zen 4)"
                        : " on " + vendor + ": bf16 dot products no faster than f32 FMAs";
  return {true, fast, why};
}
#else
CpuBf16Support detect() { return {false, false, "not an x86 CPU (bf16 support not detected)"}; }
#endif

}  // namespace

bool bf16_products_outrun_fp32(bool native, bool amx_bf16, const std::string& vendor) {
  return native && (amx_bf16 || vendor == "AuthenticAMD");
}

const CpuBf16Support& cpu_bf16_support() {
  static const CpuBf16Support support = detect();
  return support;
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "unknown CPU" : line.substr(start);
  }
  return "unknown CPU";
}

}  // namespace tisa
