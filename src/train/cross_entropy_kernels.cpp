// Row-wise cross-entropy over bf16 logits; see cross_entropy_kernels.h. Compiled with
// -fno-math-errno (CMakeLists.txt); the AVX-512 functions carry their own target attribute and run
// only after a CPU check, so the file builds and runs on any x86-64 (and, scalar, elsewhere).
#include "train/cross_entropy_kernels.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define TISA_CE_AVX512 1
#else
#define TISA_CE_AVX512 0
#endif

namespace tisa::train::kernels {

float bf16_to_float(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

uint16_t float_to_bf16(float value) {
  uint32_t u;
  std::memcpy(&u, &value, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN
  u += 0x7fffu + ((u >> 16) & 1u);                      // round to nearest, ties to even
  return static_cast<uint16_t>(u >> 16);
}

namespace {

std::atomic<bool> g_force_scalar{false};

// ---------------------------------------------------------------------------------- scalar path
void forward_scalar(const uint16_t* logits, const int64_t* labels, int64_t row_begin, int64_t row_end, int64_t cols,
                    float* lse, float* loss, int64_t* argmax) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint16_t* x = logits + r * cols;
    float m = -std::numeric_limits<float>::infinity();
    int64_t arg = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const float v = bf16_to_float(x[c]);
      if (v > m) m = v, arg = c;
    }
    double sum = 0;  // sequential: a double keeps the long sum as accurate as the 16 lanes' sums
    for (int64_t c = 0; c < cols; ++c) sum += std::exp(bf16_to_float(x[c]) - m);
    lse[r] = m + static_cast<float>(std::log(sum));
    loss[r] = lse[r] - bf16_to_float(x[labels[r]]);
    argmax[r] = arg;
  }
}

void backward_scalar(const uint16_t* logits, const int64_t* labels, const float* lse, float scale, int64_t row_begin,
                     int64_t row_end, int64_t cols, uint16_t* grad) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint16_t* x = logits + r * cols;
    uint16_t* g = grad + r * cols;
    for (int64_t c = 0; c < cols; ++c) {
      float p = std::exp(bf16_to_float(x[c]) - lse[r]);
      if (c == labels[r]) p -= 1.0f;
      g[c] = float_to_bf16(scale * p);
    }
  }
}

#if TISA_CE_AVX512
#define TISA_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))
// GCC 12 warns inside its own avx512fintrin.h (intrinsics built on _mm512_undefined_*) wherever
// they are inlined: a known false positive, silenced for these functions only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// 16 bf16 values (the lanes of `mask`; the others read as 0) as float32.
TISA_AVX512 inline __m512 load_bf16(const uint16_t* p, __mmask16 mask) {
  const __m256i h = _mm256_maskz_loadu_epi16(mask, p);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

// float32 -> bf16 (nearest even, NaN kept) stored to the lanes of `mask`.
TISA_AVX512 inline void store_bf16(uint16_t* p, __m512 v, __mmask16 mask) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i out = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb)), 16);
  out = _mm512_mask_mov_epi32(out, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_set1_epi32(0x7fc0));
  _mm512_mask_cvtepi32_storeu_epi16(p, mask, out);
}

// exp(x): x = n·ln2 + r with |r| ≤ ln2/2 (ln2 split in two for an exact n·ln2_hi), e^r by its
// Taylor series to r⁷ (relative error < 2e-7 there), then ·2ⁿ by vscalefps, which underflows to 0
// gracefully. x is clamped at −104 (e^−104 is below float's smallest subnormal); NaN passes.
TISA_AVX512 inline __m512 exp16(__m512 x) {
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

inline __mmask16 lanes(int64_t remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << remaining) - 1u);
}

TISA_AVX512 void forward_avx512(const uint16_t* logits, const int64_t* labels, int64_t row_begin, int64_t row_end,
                                int64_t cols, float* lse, float* loss, int64_t* argmax) {
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint16_t* x = logits + r * cols;
    // Pass 1: per lane the maximum and the first column holding it (strictly greater replaces).
    __m512 vmax = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    __m512i varg = _mm512_set1_epi32(std::numeric_limits<int32_t>::max());
    for (int64_t c = 0; c < cols; c += 16) {
      const __mmask16 k = lanes(cols - c);
      const __m512 v = load_bf16(x + c, k);
      const __mmask16 gt = _mm512_mask_cmp_ps_mask(k, v, vmax, _CMP_GT_OQ);
      vmax = _mm512_mask_mov_ps(vmax, gt, v);
      varg = _mm512_mask_mov_epi32(varg, gt, _mm512_add_epi32(iota, _mm512_set1_epi32(static_cast<int32_t>(c))));
    }
    const float m = _mm512_reduce_max_ps(vmax);
    const __mmask16 at_max = _mm512_cmp_ps_mask(vmax, _mm512_set1_ps(m), _CMP_EQ_OQ);
    const int32_t arg = at_max ? _mm512_mask_reduce_min_epi32(at_max, varg) : 0;
    // Pass 2: Σ exp(x − m), 16 partial sums added in a fixed order.
    const __m512 vm = _mm512_set1_ps(m);
    __m512 vsum = _mm512_setzero_ps();
    for (int64_t c = 0; c < cols; c += 16) {
      const __mmask16 k = lanes(cols - c);
      vsum = _mm512_mask_add_ps(vsum, k, vsum, exp16(_mm512_sub_ps(load_bf16(x + c, k), vm)));
    }
    lse[r] = m + std::log(_mm512_reduce_add_ps(vsum));
    loss[r] = lse[r] - bf16_to_float(x[labels[r]]);
    argmax[r] = arg;
  }
}

TISA_AVX512 void backward_avx512(const uint16_t* logits, const int64_t* labels, const float* lse, float scale,
                                 int64_t row_begin, int64_t row_end, int64_t cols, uint16_t* grad) {
  const __m512 one = _mm512_set1_ps(1.0f), vscale = _mm512_set1_ps(scale);
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint16_t* x = logits + r * cols;
    uint16_t* g = grad + r * cols;
    const __m512 vlse = _mm512_set1_ps(lse[r]);
    const int64_t label = labels[r];
    for (int64_t c = 0; c < cols; c += 16) {
      const __mmask16 k = lanes(cols - c);
      __m512 p = exp16(_mm512_sub_ps(load_bf16(x + c, k), vlse));
      if (label >= c && label < c + 16)  // the one-hot term
        p = _mm512_mask_sub_ps(p, static_cast<__mmask16>(1u << (label - c)), p, one);
      store_bf16(g + c, _mm512_mul_ps(vscale, p), k);
    }
  }
}

bool cpu_has_avx512() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl");
  return has;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

}  // namespace

bool cross_entropy_vectorised() {
#if TISA_CE_AVX512
  return cpu_has_avx512() && !g_force_scalar.load();
#else
  return false;
#endif
}

void cross_entropy_force_scalar(bool force_scalar) { g_force_scalar.store(force_scalar); }

void cross_entropy_forward(const uint16_t* logits, const int64_t* labels, int64_t row_begin, int64_t row_end,
                           int64_t cols, float* lse, float* loss, int64_t* argmax) {
#if TISA_CE_AVX512
  if (cross_entropy_vectorised()) return forward_avx512(logits, labels, row_begin, row_end, cols, lse, loss, argmax);
#endif
  forward_scalar(logits, labels, row_begin, row_end, cols, lse, loss, argmax);
}

void cross_entropy_backward(const uint16_t* logits, const int64_t* labels, const float* lse, float scale,
                            int64_t row_begin, int64_t row_end, int64_t cols, uint16_t* grad) {
#if TISA_CE_AVX512
  if (cross_entropy_vectorised()) return backward_avx512(logits, labels, lse, scale, row_begin, row_end, cols, grad);
#endif
  backward_scalar(logits, labels, lse, scale, row_begin, row_end, cols, grad);
}

}  // namespace tisa::train::kernels
