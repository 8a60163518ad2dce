// Row-wise cross-entropy over bf16 or float32 logits; see cross_entropy_kernels.h. Compiled with
// -fno-math-errno (CMakeLists.txt); the AVX-512 functions carry their own target attribute and run
// only after a CPU check, so the file builds and runs on any x86-64 (and, scalar, elsewhere).
#include "train/cross_entropy_kernels.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/bf16.h"

#define TISA_CE_AVX512 TISA_HAVE_AVX512_KERNELS

namespace tisa::train::kernels {

namespace {

std::atomic<bool> g_force_scalar{false};

// ---------------------------------------------------------------------------------- scalar path
template <typename T>
void forward_scalar(const T* logits, const int64_t* labels, int64_t row_begin, int64_t row_end, int64_t cols,
                    RowNorm* norm, float* loss, int64_t* argmax) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const T* x = logits + r * cols;
    float m = -std::numeric_limits<float>::infinity();
    int64_t arg = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const float v = to_float(x[c]);
      if (v > m) m = v, arg = c;
    }
    double sum = 0;  // sequential: a double keeps the long sum as accurate as the 16 lanes' sums
    for (int64_t c = 0; c < cols; ++c) sum += std::exp(to_float(x[c]) - m);
    norm[r] = {m, static_cast<float>(std::log(sum))};
    loss[r] = (m - to_float(x[labels[r]])) + norm[r].log_sum;
    argmax[r] = arg;
  }
}

template <typename T>
void backward_scalar(const T* logits, const int64_t* labels, const RowNorm* norm, float scale, int64_t row_begin,
                     int64_t row_end, int64_t cols, T* grad) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const T* x = logits + r * cols;
    T* g = grad + r * cols;
    for (int64_t c = 0; c < cols; ++c) {
      float p = std::exp((to_float(x[c]) - norm[r].max) - norm[r].log_sum);
      if (c == labels[r]) p -= 1.0f;
      g[c] = from_float<T>(scale * p);
    }
  }
}

#if TISA_CE_AVX512
#define TISA_AVX512 TISA_TARGET_AVX512
TISA_AVX512_CODE_BEGIN
using namespace avx512;  // exp16, lanes, load_lanes, store_lanes

template <typename T>
TISA_AVX512 void forward_avx512(const T* logits, const int64_t* labels, int64_t row_begin, int64_t row_end,
                                int64_t cols, RowNorm* norm, float* loss, int64_t* argmax) {
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (int64_t r = row_begin; r < row_end; ++r) {
    const T* x = logits + r * cols;
    // Pass 1: per lane the maximum and the first column holding it (strictly greater replaces).
    __m512 vmax = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    __m512i varg = _mm512_set1_epi32(std::numeric_limits<int32_t>::max());
    for (int64_t c = 0; c < cols; c += 16) {
      const __mmask16 k = lanes(cols - c);
      const __m512 v = load_lanes(x + c, k);
      const __mmask16 gt = _mm512_mask_cmp_ps_mask(k, v, vmax, _CMP_GT_OQ);
      vmax = _mm512_mask_mov_ps(vmax, gt, v);
      varg = _mm512_mask_mov_epi32(varg, gt, _mm512_add_epi32(iota, _mm512_set1_epi32(static_cast<int32_t>(c))));
    }
    const float m = _mm512_reduce_max_ps(vmax);
    const __mmask16 at_max = _mm512_cmp_ps_mask(vmax, _mm512_set1_ps(m), _CMP_EQ_OQ);
    const int32_t arg = at_max ? _mm512_mask_reduce_min_epi32(at_max, varg) : 0;
    // Pass 2: Σ exp(x − m) in 16 double partial sums added in a fixed order. In float the row's
    // maximum term (1) would round away ~1e-6 of a sum over thousands of small terms.
    const __m512 vm = _mm512_set1_ps(m);
    __m512d vsum_lo = _mm512_setzero_pd(), vsum_hi = _mm512_setzero_pd();
    for (int64_t c = 0; c < cols; c += 16) {
      const __mmask16 k = lanes(cols - c);
      const __m512 e = _mm512_maskz_mov_ps(k, exp16(_mm512_sub_ps(load_lanes(x + c, k), vm)));
      const __m256 e_hi = _mm256_castsi256_ps(_mm512_extracti64x4_epi64(_mm512_castps_si512(e), 1));
      vsum_lo = _mm512_add_pd(vsum_lo, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
      vsum_hi = _mm512_add_pd(vsum_hi, _mm512_cvtps_pd(e_hi));
    }
    norm[r] = {m, static_cast<float>(std::log(_mm512_reduce_add_pd(vsum_lo) + _mm512_reduce_add_pd(vsum_hi)))};
    loss[r] = (m - to_float(x[labels[r]])) + norm[r].log_sum;
    argmax[r] = arg;
  }
}

template <typename T>
TISA_AVX512 void backward_avx512(const T* logits, const int64_t* labels, const RowNorm* norm, float scale,
                                 int64_t row_begin, int64_t row_end, int64_t cols, T* grad) {
  const __m512 one = _mm512_set1_ps(1.0f), vscale = _mm512_set1_ps(scale);
  for (int64_t r = row_begin; r < row_end; ++r) {
    const T* x = logits + r * cols;
    T* g = grad + r * cols;
    const __m512 vmax = _mm512_set1_ps(norm[r].max), vlog_sum = _mm512_set1_ps(norm[r].log_sum);
    const int64_t label = labels[r];
    for (int64_t c = 0; c < cols; c += 16) {
      const __mmask16 k = lanes(cols - c);
      __m512 p = exp16(_mm512_sub_ps(_mm512_sub_ps(load_lanes(x + c, k), vmax), vlog_sum));
      if (label >= c && label < c + 16)  // the one-hot term
        p = _mm512_mask_sub_ps(p, static_cast<__mmask16>(1u << (label - c)), p, one);
      store_lanes(g + c, _mm512_mul_ps(vscale, p), k);
    }
  }
}

TISA_AVX512_CODE_END
#endif

}  // namespace

bool cross_entropy_vectorised() {
#if TISA_CE_AVX512
  return avx512::cpu_has_avx512() && !g_force_scalar.load();
#else
  return false;
#endif
}

void cross_entropy_force_scalar(bool force_scalar) { g_force_scalar.store(force_scalar); }

namespace {

template <typename T>
void forward_any(const T* logits, const int64_t* labels, int64_t row_begin, int64_t row_end, int64_t cols,
                 RowNorm* norm, float* loss, int64_t* argmax) {
#if TISA_CE_AVX512
  if (cross_entropy_vectorised()) return forward_avx512(logits, labels, row_begin, row_end, cols, norm, loss, argmax);
#endif
  forward_scalar(logits, labels, row_begin, row_end, cols, norm, loss, argmax);
}

template <typename T>
void backward_any(const T* logits, const int64_t* labels, const RowNorm* norm, float scale, int64_t row_begin,
                  int64_t row_end, int64_t cols, T* grad) {
#if TISA_CE_AVX512
  if (cross_entropy_vectorised()) return backward_avx512(logits, labels, norm, scale, row_begin, row_end, cols, grad);
#endif
  backward_scalar(logits, labels, norm, scale, row_begin, row_end, cols, grad);
}

}  // namespace

void cross_entropy_forward(const uint16_t* logits, const int64_t* labels, int64_t row_begin, int64_t row_end,
                           int64_t cols, RowNorm* norm, float* loss, int64_t* argmax) {
  forward_any(logits, labels, row_begin, row_end, cols, norm, loss, argmax);
}

void cross_entropy_forward(const float* logits, const int64_t* labels, int64_t row_begin, int64_t row_end,
                           int64_t cols, RowNorm* norm, float* loss, int64_t* argmax) {
  forward_any(logits, labels, row_begin, row_end, cols, norm, loss, argmax);
}

void cross_entropy_backward(const uint16_t* logits, const int64_t* labels, const RowNorm* norm, float scale,
                            int64_t row_begin, int64_t row_end, int64_t cols, uint16_t* grad) {
  backward_any(logits, labels, norm, scale, row_begin, row_end, cols, grad);
}

void cross_entropy_backward(const float* logits, const int64_t* labels, const RowNorm* norm, float scale,
                            int64_t row_begin, int64_t row_end, int64_t cols, float* grad) {
  backward_any(logits, labels, norm, scale, row_begin, row_end, cols, grad);
}

}  // namespace tisa::train::kernels
