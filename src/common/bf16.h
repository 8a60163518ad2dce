// bf16 as stored (the upper 16 bits of a float32) for the hand-written CPU kernels: scalar
// conversions everywhere, and on x86-64 the AVX-512 loads, stores and exp they share. No torch
// header. The AVX-512 functions carry their own target attribute; call them only after a CPU check.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define TISA_HAVE_AVX512_KERNELS 1
#else
#define TISA_HAVE_AVX512_KERNELS 0
#endif

namespace tisa {

inline float bf16_to_float(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Rounded to nearest, ties to even; a NaN stays a NaN.
inline uint16_t float_to_bf16(float value) {
  uint32_t u;
  std::memcpy(&u, &value, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

// One element of a kernel's storage type (uint16_t: bf16 bits; float) as float32, and back.
inline float to_float(uint16_t bits) { return bf16_to_float(bits); }
inline float to_float(float x) { return x; }
template <typename T>
T from_float(float x);
template <>
inline uint16_t from_float<uint16_t>(float x) { return float_to_bf16(x); }
template <>
inline float from_float<float>(float x) { return x; }

#if TISA_HAVE_AVX512_KERNELS
#define TISA_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))
#define TISA_TARGET_AVX512_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

// GCC 12 warns inside its own avx512fintrin.h (intrinsics built on _mm512_undefined_*) wherever
// they are inlined: a known false positive, silenced around the AVX-512 code of each kernel file.
#if defined(__GNUC__) && !defined(__clang__)
#define TISA_AVX512_CODE_BEGIN \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define TISA_AVX512_CODE_END _Pragma("GCC diagnostic pop")
#else
#define TISA_AVX512_CODE_BEGIN
#define TISA_AVX512_CODE_END
#endif

namespace avx512 {
TISA_AVX512_CODE_BEGIN

// The first `remaining` of 16 lanes.
inline __mmask16 lanes(int64_t remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << remaining) - 1u);
}

// 16 bf16 values (the lanes of `mask`; the others read as 0) as float32.
TISA_TARGET_AVX512 inline __m512 load_bf16(const uint16_t* p, __mmask16 mask) {
  const __m256i h = _mm256_maskz_loadu_epi16(mask, p);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

// float32 -> bf16 (nearest even, NaN kept) stored to the lanes of `mask`.
TISA_TARGET_AVX512 inline void store_bf16(uint16_t* p, __m512 v, __mmask16 mask) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i out = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb)), 16);
  out = _mm512_mask_mov_epi32(out, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_set1_epi32(0x7fc0));
  _mm512_mask_cvtepi32_storeu_epi16(p, mask, out);
}

// 16 values of either storage type (the lanes of `mask`; the others read as 0) as float32, and back.
TISA_TARGET_AVX512 inline __m512 load_lanes(const uint16_t* p, __mmask16 mask) { return load_bf16(p, mask); }
TISA_TARGET_AVX512 inline __m512 load_lanes(const float* p, __mmask16 mask) { return _mm512_maskz_loadu_ps(mask, p); }
TISA_TARGET_AVX512 inline void store_lanes(uint16_t* p, __m512 v, __mmask16 mask) { store_bf16(p, v, mask); }
TISA_TARGET_AVX512 inline void store_lanes(float* p, __m512 v, __mmask16 mask) { _mm512_mask_storeu_ps(p, mask, v); }

// exp(x): x = n·ln2 + r with |r| ≤ ln2/2 (ln2 split in two for an exact n·ln2_hi), e^r by its
// Taylor series to r⁷ (relative error < 2e-7 there), then ·2ⁿ by vscalefps, which underflows to 0
// gracefully. x is clamped at −104 (e^−104 is below float's smallest subnormal); NaN passes.
TISA_TARGET_AVX512 inline __m512 exp16(__m512 x) {
  x = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);  // the second operand wins when one is NaN
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.4426950408889634f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187e-06f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

TISA_AVX512_CODE_END

// Whether this CPU runs the AVX-512 F/BW/VL helpers above, and also AVX512_BF16's dot products.
inline bool cpu_has_avx512() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl");
  return has;
}

}  // namespace avx512
#endif

}  // namespace tisa
