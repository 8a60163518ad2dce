// Softmax attention for one head over bf16 or float32 rows; see attention_kernels.h. Compiled with
// -fno-math-errno (CMakeLists.txt). Every bf16 product is C = A·B with B packed as pairs:
// Bp[t][n] = (B[2t][n], B[2t+1][n]) in one 32-bit word, the operand layout of AVX512_BF16's
// vdpbf16ps, and A read as the same pairs (A[m][2t], A[m][2t+1]): from bf16 rows, or from such a
// packed copy read down its columns, which gives Pᵀ·dO and dSᵀ·q without a transpose. Odd lengths
// and widths are padded with zeros in the packed copies, never read past the caller's rows. A
// float32 product packs B as plain rows [K][N] and reads A one element at a time, through strides:
// Pᵀ and dSᵀ are P and dS read down their columns, with nothing packed.
#include "model/attention_kernels.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "common/bf16.h"
#include "common/cpu_features.h"

namespace tisa::model::kernels {
namespace {

std::atomic<bool> g_force_scalar{false};

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

uint32_t pair(uint16_t lo, uint16_t hi) { return static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16); }

// Bp[t][n] = (X[n][2t], X[n][2t+1]) for n < rows, 0 for rows ≤ n < N; t < cols/2 (cols even).
// Packs Xᵀ: the right operand of q·kᵀ and dO·vᵀ.
void pack_transposed(Bf16Rows x, int64_t rows, int64_t cols, int64_t N, uint32_t* bp) {
  for (int64_t t = 0; t < cols / 2; ++t) {
    uint32_t* out = bp + t * N;
    for (int64_t n = 0; n < rows; ++n) out[n] = pair(x.data[n * x.row_stride + 2 * t], x.data[n * x.row_stride + 2 * t + 1]);
    std::fill(out + rows, out + N, 0u);
  }
}

// Bp[t][c] = (X[2t][c], X[2t+1][c]) for c < cols (0 up to N), rows ≥ `rows` read as 0;
// t < ceil(rows/2). Packs X itself: the right operand of P·v, dS·k, dOᵀ·P and qᵀ·dS.
void pack_rows(Bf16Rows x, int64_t rows, int64_t cols, int64_t N, uint32_t* bp) {
  for (int64_t t = 0; t < (rows + 1) / 2; ++t) {
    uint32_t* out = bp + t * N;
    const uint16_t* r0 = x.data + 2 * t * x.row_stride;
    if (2 * t + 1 < rows) {
      const uint16_t* r1 = r0 + x.row_stride;
      for (int64_t c = 0; c < cols; ++c) out[c] = pair(r0[c], r1[c]);
    } else {
      for (int64_t c = 0; c < cols; ++c) out[c] = pair(r0[c], 0);
    }
    std::fill(out + cols, out + N, 0u);
  }
}

// The left operand: pair t of row m is the two bf16 at a + m·row_step + t·pair_step (elements).
// Rows of bf16: {data, row stride, 2}. A packed copy Bp [T][N] read as its transpose: {Bp, 2, 2·N}.
struct Left {
  const uint16_t* a;
  int64_t row_step, pair_step;
  const uint16_t* pair_at(int64_t m, int64_t t) const { return a + m * row_step + t * pair_step; }
};
Left rows_of(Bf16Rows x) { return {x.data, x.row_stride, 2}; }
Left columns_of(const uint32_t* bp, int64_t N) { return {reinterpret_cast<const uint16_t*>(bp), 2, 2 * N}; }

// float32: Bt[t][n] = X[n][t] for n < rows, 0 for rows ≤ n < N; t < cols (the right operand of
// q·kᵀ and dO·vᵀ).
void pack_transposed(F32Rows x, int64_t rows, int64_t cols, int64_t N, float* bt) {
  for (int64_t t = 0; t < cols; ++t) {
    float* out = bt + t * N;
    for (int64_t n = 0; n < rows; ++n) out[n] = x.data[n * x.row_stride + t];
    std::fill(out + rows, out + N, 0.0f);
  }
}

// float32: B[t][c] = X[t][c] for c < cols, 0 up to N; t < rows (the right operand of P·v, dS·k,
// Pᵀ·dO and dSᵀ·q).
void pack_rows(F32Rows x, int64_t rows, int64_t cols, int64_t N, float* b) {
  for (int64_t t = 0; t < rows; ++t) {
    std::copy(x.data + t * x.row_stride, x.data + t * x.row_stride + cols, b + t * N);
    std::fill(b + t * N + cols, b + (t + 1) * N, 0.0f);
  }
}

// The float32 left operand: element (m, t) at a + m·row_step + t·elem_step. Rows: {data, stride,
// 1}; a matrix X [T, ld] read as its transpose: {X, 1, ld}.
struct LeftF32 {
  const float* a;
  int64_t row_step, elem_step;
  float at(int64_t m, int64_t t) const { return a[m * row_step + t * elem_step]; }
};


// ---------------------------------------------------------------------------------- scalar path
// C[M][N] = A[M][K]·B, K even, B packed as pairs. Each pair adds its two products in order, as
// vdpbf16ps does (a product of two bf16 values is exact in float32).
void gemm_scalar(Left a, int64_t M, int64_t K, const uint32_t* bp, int64_t N, float* c, int64_t ldc) {
  for (int64_t m = 0; m < M; ++m) {
    float* row = c + m * ldc;
    std::fill(row, row + N, 0.0f);
    for (int64_t t = 0; t < K / 2; ++t) {
      const uint16_t* pair = a.pair_at(m, t);
      const float a0 = bf16_to_float(pair[0]), a1 = bf16_to_float(pair[1]);
      const uint32_t* b = bp + t * N;
      for (int64_t n = 0; n < N; ++n) {
        const float b0 = bf16_to_float(static_cast<uint16_t>(b[n])), b1 = bf16_to_float(static_cast<uint16_t>(b[n] >> 16));
        row[n] = (row[n] + a1 * b1) + a0 * b0;
      }
    }
  }
}

// C[M][N] = A[M][K]·B for float32, B [K][N].
void gemm_scalar(LeftF32 a, int64_t M, int64_t K, const float* b, int64_t N, float* c, int64_t ldc) {
  for (int64_t m = 0; m < M; ++m) {
    float* row = c + m * ldc;
    std::fill(row, row + N, 0.0f);
    for (int64_t t = 0; t < K; ++t) {
      const float x = a.at(m, t);
      for (int64_t n = 0; n < N; ++n) row[n] += x * b[t * N + n];
    }
  }
}

// Row i of S: s = S·scale + bias + mask over [0, L); P = softmax(s) in T, zero up to Lp.
template <typename T>
void softmax_row_scalar(float* s, const float* bias, const float* mask, float scale, int64_t L, int64_t Lp, T* p) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < L; ++j) {
    s[j] = s[j] * scale + (bias ? bias[j] : 0.0f) + (mask ? mask[j] : 0.0f);
    m = std::max(m, s[j]);
  }
  float sum = 0.0f;
  for (int64_t j = 0; j < L; ++j) sum += (s[j] = std::exp(s[j] - m));
  const float inv = 1.0f / sum;
  for (int64_t j = 0; j < L; ++j) p[j] = from_float<T>(s[j] * inv);
  std::fill(p + L, p + Lp, T{0});
}

// dS = P ∘ (dP − Σ_j P·dP) for one row: in T into ds (zero up to Lp), float32 into dlogits
// (added to it when `accumulate`).
template <typename T>
void softmax_backward_row_scalar(const float* dp, const T* p, int64_t L, int64_t Lp, T* ds, float* dlogits,
                                 bool accumulate) {
  float dot = 0.0f;
  for (int64_t j = 0; j < L; ++j) dot += to_float(p[j]) * dp[j];
  for (int64_t j = 0; j < L; ++j) {
    const float g = to_float(p[j]) * (dp[j] - dot);
    ds[j] = from_float<T>(g);
    if (dlogits) dlogits[j] = accumulate ? dlogits[j] + g : g;
  }
  std::fill(ds + L, ds + Lp, T{0});
}

// ---------------------------------------------------------------------------------- AVX-512 path
#if TISA_HAVE_AVX512_KERNELS
TISA_AVX512_CODE_BEGIN
using namespace avx512;  // exp16, lanes, load_bf16, store_bf16

// An MR × (16·NV) block of C from MR rows of A and NV columns of 16 of B, for bf16 pairs
// (vdpbf16ps over K/2 pairs) and for float32 (FMAs over K).
struct Bf16Block {
  using A = Left;
  using B = uint32_t;
  template <int MR, int NV>
  TISA_TARGET_AVX512_BF16 static void run(Left a, int64_t m0, int64_t K, const uint32_t* bp, int64_t N, float* c,
                                          int64_t ldc) {
    __m512 acc[MR][NV];
    for (int r = 0; r < MR; ++r)
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
    for (int64_t t = 0; t < K / 2; ++t) {
      __m512i b[NV];
      for (int v = 0; v < NV; ++v) b[v] = _mm512_loadu_si512(bp + t * N + 16 * v);
      for (int r = 0; r < MR; ++r) {
        int32_t word;
        std::memcpy(&word, a.pair_at(m0 + r, t), sizeof word);
        const __m512bh x = reinterpret_cast<__m512bh>(_mm512_set1_epi32(word));
        for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], x, reinterpret_cast<__m512bh>(b[v]));
      }
    }
    for (int r = 0; r < MR; ++r)
      for (int v = 0; v < NV; ++v) _mm512_storeu_ps(c + r * ldc + 16 * v, acc[r][v]);
  }
};

struct F32Block {
  using A = LeftF32;
  using B = float;
  template <int MR, int NV>
  TISA_TARGET_AVX512 static void run(LeftF32 a, int64_t m0, int64_t K, const float* bp, int64_t N, float* c,
                                     int64_t ldc) {
    __m512 acc[MR][NV];
    for (int r = 0; r < MR; ++r)
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
    for (int64_t t = 0; t < K; ++t) {
      __m512 b[NV];
      for (int v = 0; v < NV; ++v) b[v] = _mm512_loadu_ps(bp + t * N + 16 * v);
      for (int r = 0; r < MR; ++r) {
        const __m512 x = _mm512_set1_ps(a.at(m0 + r, t));
        for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(x, b[v], acc[r][v]);
      }
    }
    for (int r = 0; r < MR; ++r)
      for (int v = 0; v < NV; ++v) _mm512_storeu_ps(c + r * ldc + 16 * v, acc[r][v]);
  }
};

// Every row of C for NV columns of 16 starting at column n0.
template <class Block, int MR, int NV>
void gemm_columns(typename Block::A a, int64_t M, int64_t K, const typename Block::B* bp, int64_t N, float* c,
                  int64_t ldc, int64_t n0) {
  int64_t m = 0;
  for (; m + MR <= M; m += MR) Block::template run<MR, NV>(a, m, K, bp + n0, N, c + m * ldc + n0, ldc);
  for (; m + 4 <= M; m += 4) Block::template run<4, NV>(a, m, K, bp + n0, N, c + m * ldc + n0, ldc);
  for (; m < M; ++m) Block::template run<1, NV>(a, m, K, bp + n0, N, c + m * ldc + n0, ldc);
}

// C[M][N] = A·B with N a multiple of 16, in blocks of at most 24 accumulators.
template <class Block>
void gemm_avx512(typename Block::A a, int64_t M, int64_t K, const typename Block::B* bp, int64_t N, float* c,
                 int64_t ldc) {
  int64_t n = 0;
  for (; n + 64 <= N; n += 64) gemm_columns<Block, 6, 4>(a, M, K, bp, N, c, ldc, n);
  switch ((N - n) / 16) {
    case 3: gemm_columns<Block, 8, 3>(a, M, K, bp, N, c, ldc, n); break;
    case 2: gemm_columns<Block, 12, 2>(a, M, K, bp, N, c, ldc, n); break;
    case 1: gemm_columns<Block, 16, 1>(a, M, K, bp, N, c, ldc, n); break;
    default: break;
  }
}


template <typename T>
TISA_TARGET_AVX512 void softmax_row_avx512(float* s, const float* bias, const float* mask, float scale, int64_t L,
                                           int64_t Lp, T* p) {
  const __m512 vscale = _mm512_set1_ps(scale);
  __m512 vmax = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  for (int64_t j = 0; j < L; j += 16) {
    const __mmask16 k = lanes(L - j);
    __m512 x = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, s + j), vscale);
    if (bias) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(k, bias + j));
    if (mask) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(k, mask + j));
    _mm512_mask_storeu_ps(s + j, k, x);
    vmax = _mm512_mask_max_ps(vmax, k, vmax, x);
  }
  const __m512 m = _mm512_set1_ps(_mm512_reduce_max_ps(vmax));
  __m512 vsum = _mm512_setzero_ps();
  for (int64_t j = 0; j < L; j += 16) {
    const __mmask16 k = lanes(L - j);
    const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, s + j), m));
    _mm512_mask_storeu_ps(s + j, k, e);
    vsum = _mm512_mask_add_ps(vsum, k, vsum, e);
  }
  const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(vsum));
  for (int64_t j = 0; j < L; j += 16) {
    const __mmask16 k = lanes(L - j);
    store_lanes(p + j, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, s + j), inv), k);
  }
  std::fill(p + L, p + Lp, T{0});
}

template <typename T>
TISA_TARGET_AVX512 void softmax_backward_row_avx512(const float* dp, const T* p, int64_t L, int64_t Lp, T* ds,
                                                    float* dlogits, bool accumulate) {
  __m512 vdot = _mm512_setzero_ps();
  for (int64_t j = 0; j < L; j += 16) {
    const __mmask16 k = lanes(L - j);
    vdot = _mm512_fmadd_ps(load_lanes(p + j, k), _mm512_maskz_loadu_ps(k, dp + j), vdot);
  }
  const __m512 dot = _mm512_set1_ps(_mm512_reduce_add_ps(vdot));
  for (int64_t j = 0; j < L; j += 16) {
    const __mmask16 k = lanes(L - j);
    const __m512 g = _mm512_mul_ps(load_lanes(p + j, k), _mm512_sub_ps(_mm512_maskz_loadu_ps(k, dp + j), dot));
    store_lanes(ds + j, g, k);
    if (dlogits)
      _mm512_mask_storeu_ps(dlogits + j, k, accumulate ? _mm512_add_ps(_mm512_maskz_loadu_ps(k, dlogits + j), g) : g);
  }
  std::fill(ds + L, ds + Lp, T{0});
}
template <typename T>
TISA_TARGET_AVX512 void store_rows_avx512(const float* c, int64_t ldc, int64_t M, int64_t d, float scale,
                                          MutableRows<T> out) {
  const __m512 vscale = _mm512_set1_ps(scale);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < d; j += 16)
      store_lanes(out.data + i * out.row_stride + j, _mm512_mul_ps(_mm512_loadu_ps(c + i * ldc + j), vscale),
                  lanes(d - j));
}
TISA_AVX512_CODE_END
#endif

bool vectorised(bool bf16) {
#if TISA_HAVE_AVX512_KERNELS
  static const bool avx512 = avx512::cpu_has_avx512();
  static const bool native_bf16 = avx512 && cpu_bf16_support().native;
  return (bf16 ? native_bf16 : avx512) && !g_force_scalar.load();
#else
  (void)bf16;
  return false;
#endif
}

// The operations, each on the path this CPU takes for rows of T.
template <typename T>
struct Ops {
  bool simd = vectorised(std::is_same_v<T, uint16_t>);
  void gemm(Left a, int64_t M, int64_t K, const uint32_t* bp, int64_t N, float* c, int64_t ldc) const {
#if TISA_HAVE_AVX512_KERNELS
    if (simd) return gemm_avx512<Bf16Block>(a, M, K, bp, N, c, ldc);
#endif
    gemm_scalar(a, M, K, bp, N, c, ldc);
  }
  void gemm(LeftF32 a, int64_t M, int64_t K, const float* b, int64_t N, float* c, int64_t ldc) const {
#if TISA_HAVE_AVX512_KERNELS
    if (simd) return gemm_avx512<F32Block>(a, M, K, b, N, c, ldc);
#endif
    gemm_scalar(a, M, K, b, N, c, ldc);
  }
  void softmax_row(float* s, const float* bias, const float* mask, float scale, int64_t L, int64_t Lp, T* p) const {
#if TISA_HAVE_AVX512_KERNELS
    if (simd) return softmax_row_avx512(s, bias, mask, scale, L, Lp, p);
#endif
    softmax_row_scalar(s, bias, mask, scale, L, Lp, p);
  }
  void softmax_backward_row(const float* dp, const T* p, int64_t L, int64_t Lp, T* ds, float* dlogits,
                            bool accumulate) const {
#if TISA_HAVE_AVX512_KERNELS
    if (simd) return softmax_backward_row_avx512(dp, p, L, Lp, ds, dlogits, accumulate);
#endif
    softmax_backward_row_scalar(dp, p, L, Lp, ds, dlogits, accumulate);
  }
  // out[i][c] = C[i][c]·scale in T for i < M, c < d.
  void store_rows(const float* c, int64_t ldc, int64_t M, int64_t d, float scale, MutableRows<T> out) const {
#if TISA_HAVE_AVX512_KERNELS
    if (simd) return store_rows_avx512(c, ldc, M, d, scale, out);
#endif
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < d; ++j) out.data[i * out.row_stride + j] = from_float<T>(c[i * ldc + j] * scale);
  }
};

// Scratch for one head (a few hundred KiB at L 128), one per thread, grown when a larger head
// comes and otherwise reused: heads run back to back and every buffer is written before it is read.
struct Scratch {
  std::vector<uint32_t> packed, packed_right;  // pairs: [max(d, Lp)/2, Np] and [Lp/2, dN]
  std::vector<float> wide, narrow;             // [L, Np] and [L, dN]
  std::vector<uint16_t> ds;                    // dS [L, Lp]
};

// Grows a scratch buffer to at least n elements (never shrinks: the next head reuses it).
template <typename V>
void fit(V& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
}

// The float32 path's scratch: Bt [max(d, L), Np] (kᵀ, vᵀ) and B [L, dN] (v, dO, q, k), S or dP
// [L, Np], the [L, dN] products, dS [L, Lp].
struct ScratchF32 {
  std::vector<float> packed, packed_right, wide, narrow, ds;
};

ScratchF32& scratch_f32_for(int64_t L, int64_t d) {
  thread_local ScratchF32 w;
  const int64_t Np = round_up(L, 16), Lp = round_up(L, 2), dN = round_up(d, 16);
  fit(w.packed, d * Np);
  fit(w.packed_right, L * dN);
  fit(w.wide, L * Np);
  fit(w.narrow, L * dN);
  fit(w.ds, L * Lp);
  return w;
}

Scratch& scratch_for(int64_t L, int64_t d) {
  thread_local Scratch w;
  const int64_t Np = round_up(L, 16), Lp = round_up(L, 2), dN = round_up(d, 16);
  fit(w.packed, std::max(d, Lp) / 2 * Np);
  fit(w.packed_right, Lp / 2 * dN);
  fit(w.wide, L * Np);
  fit(w.narrow, L * dN);
  fit(w.ds, L * Lp);
  return w;
}

// ------------------------------------------------------------------------- offset terms (Shaw's)
int64_t offset_of(int64_t i, int64_t j, int64_t w) { return std::min(std::max(j - i, -w), w) + w; }

// B_ir = Σ_{j: r(i,j) = r} X_ij for every query row of X [Lq, ld] (P, or dS for the logit term's
// gradient), i at its position: the two edge buckets sum the runs of the row beyond ±w (four
// partial sums, added in a fixed order), the others are single elements.
template <typename T>
void offset_bucket_rows(const T* probs, int64_t Lp, const HeadShape& shape, int64_t w, float* buckets) {
  const int64_t R = 2 * w + 1, L = shape.length;
  auto run_sum = [](const T* p, int64_t begin, int64_t end) {
    float part[4] = {0, 0, 0, 0};
    int64_t j = begin;
    for (; j + 4 <= end; j += 4)
      for (int u = 0; u < 4; ++u) part[u] += to_float(p[j + u]);
    for (; j < end; ++j) part[0] += to_float(p[j]);
    return (part[0] + part[1]) + (part[2] + part[3]);
  };
  for (int64_t row = 0; row < shape.query_rows(); ++row) {
    const T* p = probs + row * Lp;
    float* b = buckets + row * R;
    const int64_t i = shape.position(row);
    if (w == 0) {
      b[0] = run_sum(p, 0, L);
      continue;
    }
    b[0] = i - w >= 0 ? run_sum(p, 0, i - w + 1) : 0.0f;          // j ≤ i − w
    b[2 * w] = i + w < L ? run_sum(p, i + w, L) : 0.0f;          // j ≥ i + w
    for (int64_t r = 1; r < 2 * w; ++r) {
      const int64_t j = i + r - w;
      b[r] = j >= 0 && j < L ? to_float(p[j]) : 0.0f;
    }
  }
}

// dP_ij += dB_i,r(i,j) over dP [Lq, Np]: the inverse map of offset_bucket_rows.
void add_offset_bucket_grads(const float* grads, const HeadShape& shape, int64_t w, float* dp, int64_t Np) {
  const int64_t R = 2 * w + 1, L = shape.length;
  for (int64_t r = 0; r < shape.query_rows(); ++r) {
    const float* g = grads + r * R;
    float* row = dp + r * Np;
    const int64_t i = shape.position(r);
    for (int64_t j = 0; j < L; ++j) row[j] += g[offset_of(i, j, w)];
  }
}

// Row i's additive term with the offset logits: bias_ij (when there is a bias) + E_i,r(i,j).
void offset_bias_row(const float* bias_row, const float* e, int64_t i, int64_t L, int64_t w, float* row) {
  for (int64_t j = 0; j < L; ++j) row[j] = (bias_row ? bias_row[j] : 0.0f) + e[offset_of(i, j, w)];
}

// Per-thread rows for the offset terms: one bias row, and dS in float32 [L, L] for its buckets.
struct OffsetScratch {
  std::vector<float> bias_row, dlogits;
};
OffsetScratch& offset_scratch_for(int64_t L) {
  thread_local OffsetScratch w;
  if (static_cast<int64_t>(w.bias_row.size()) < L) w.bias_row.resize(static_cast<size_t>(L));
  if (static_cast<int64_t>(w.dlogits.size()) < L * L) w.dlogits.resize(static_cast<size_t>(L * L));
  return w;
}


// Row by row from S = q·kᵀ in `s` [Lq, Np]: scale, bias, mask and softmax into P [Lq, Lp], each
// query row with the bias row of its position. With offset logits, row i's bias is built first
// (offset_bias_row); with buckets, B is summed from P afterwards.
template <typename T>
void softmax_rows(const Ops<T>& ops, const HeadShape& shape, float* s, int64_t Np, const float* bias,
                  int64_t bias_stride, const float* mask, int64_t Lp, T* probs, const OffsetTerms& offsets) {
  const int64_t L = shape.length, R = 2 * offsets.window + 1;
  float* row = offsets.logits ? offset_scratch_for(L).bias_row.data() : nullptr;
  for (int64_t i = 0; i < shape.query_rows(); ++i) {
    const int64_t at = shape.position(i);
    const float* bias_row = bias ? bias + at * bias_stride : nullptr;
    if (row) {
      offset_bias_row(bias_row, offsets.logits + i * R, at, L, offsets.window, row);
      bias_row = row;
    }
    ops.softmax_row(s + i * Np, bias_row, mask, shape.scale, L, Lp, probs + i * Lp);
  }
  if (offsets.buckets) offset_bucket_rows(probs, Lp, shape, offsets.window, offsets.buckets);
}

// Row by row from dP = dO·vᵀ in `dp` [Lq, Np]: dS = P ∘ (dP − rowsum(P ∘ dP)) into ds [Lq, Lp] and,
// when not null, dlogits [L, L] (query row i at row position(i)).
// With offset terms, dB is added to dP first, and dE is summed from dS (kept in float32) after,
// which then also goes to dlogits.
template <typename T>
void softmax_backward_rows(const Ops<T>& ops, const HeadShape& shape, float* dp, int64_t Np, const T* probs,
                           int64_t Lp, T* ds, float* dlogits, bool accumulate, const OffsetTermGrads& offsets) {
  const int64_t L = shape.length, Lq = shape.query_rows();
  if (offsets.buckets) add_offset_bucket_grads(offsets.buckets, shape, offsets.window, dp, Np);
  float* ds_f32 = offsets.logits ? offset_scratch_for(L).dlogits.data() : nullptr;
  for (int64_t i = 0; i < Lq; ++i) {
    float* out = ds_f32 ? ds_f32 + i * L : (dlogits ? dlogits + shape.position(i) * L : nullptr);
    ops.softmax_backward_row(dp + i * Np, probs + i * Lp, L, Lp, ds + i * Lp, out, ds_f32 ? false : accumulate);
  }
  if (!ds_f32) return;
  offset_bucket_rows(ds_f32, L, shape, offsets.window, offsets.logits);
  if (dlogits)
    for (int64_t i = 0; i < Lq; ++i) {
      float* to = dlogits + shape.position(i) * L;
      const float* from = ds_f32 + i * L;
      for (int64_t j = 0; j < L; ++j) to[j] = accumulate ? to[j] + from[j] : from[j];
    }
}

}  // namespace

int64_t probs_stride(int64_t length) { return round_up(length, 2); }

bool attention_vectorised(bool bf16) { return vectorised(bf16); }
void attention_force_scalar(bool force_scalar) { g_force_scalar.store(force_scalar); }

void attention_forward(const HeadShape& shape, Bf16Rows q, Bf16Rows k, Bf16Rows v, const float* bias,
                       int64_t bias_stride, const float* mask, uint16_t* probs, MutableBf16Rows out,
                       OffsetTerms offsets) {
  const int64_t L = shape.length, Lq = shape.query_rows(), d = shape.head_size;
  const int64_t Np = round_up(L, 16), Lp = probs_stride(L), dN = round_up(d, 16);
  const Ops<uint16_t> ops;
  Scratch& w = scratch_for(L, d);
  // S = q·kᵀ, then row by row scale, bias, mask and softmax into P.
  pack_transposed(k, L, d, Np, w.packed.data());
  ops.gemm(rows_of(q), Lq, d, w.packed.data(), Np, w.wide.data(), Np);
  softmax_rows(ops, shape, w.wide.data(), Np, bias, bias_stride, mask, Lp, probs, offsets);
  // O = P·v.
  pack_rows(v, L, d, dN, w.packed_right.data());
  ops.gemm(rows_of({probs, Lp}), Lq, Lp, w.packed_right.data(), dN, w.narrow.data(), dN);
  ops.store_rows(w.narrow.data(), dN, Lq, d, 1.0f, out);
}

void attention_forward(const HeadShape& shape, F32Rows q, F32Rows k, F32Rows v, const float* bias,
                       int64_t bias_stride, const float* mask, float* probs, MutableF32Rows out,
                       OffsetTerms offsets) {
  const int64_t L = shape.length, Lq = shape.query_rows(), d = shape.head_size;
  const int64_t Np = round_up(L, 16), Lp = probs_stride(L), dN = round_up(d, 16);
  const Ops<float> ops;
  ScratchF32& w = scratch_f32_for(L, d);
  pack_transposed(k, L, d, Np, w.packed.data());
  ops.gemm(LeftF32{q.data, q.row_stride, 1}, Lq, d, w.packed.data(), Np, w.wide.data(), Np);
  softmax_rows(ops, shape, w.wide.data(), Np, bias, bias_stride, mask, Lp, probs, offsets);
  pack_rows(v, L, d, dN, w.packed_right.data());
  ops.gemm(LeftF32{probs, Lp, 1}, Lq, L, w.packed_right.data(), dN, w.narrow.data(), dN);
  ops.store_rows(w.narrow.data(), dN, Lq, d, 1.0f, out);
}

void attention_backward(const HeadShape& shape, Bf16Rows q, Bf16Rows k, Bf16Rows v, const uint16_t* probs,
                        Bf16Rows grad_out, MutableBf16Rows dq, MutableBf16Rows dk, MutableBf16Rows dv,
                        float* dlogits, bool accumulate_dlogits, OffsetTermGrads offset_grads) {
  const int64_t L = shape.length, Lq = shape.query_rows(), d = shape.head_size;
  const int64_t Np = round_up(L, 16), Lp = probs_stride(L), Lqp = round_up(Lq, 2), dN = round_up(d, 16);
  const Ops<uint16_t> ops;
  Scratch& w = scratch_for(L, d);
  uint16_t* ds = w.ds.data();
  // dP = dO·vᵀ, then dS = P ∘ (dP − rowsum(P ∘ dP)).
  pack_transposed(v, L, d, Np, w.packed.data());
  ops.gemm(rows_of(grad_out), Lq, d, w.packed.data(), Np, w.wide.data(), Np);
  softmax_backward_rows(ops, shape, w.wide.data(), Np, probs, Lp, ds, dlogits, accumulate_dlogits, offset_grads);
  // dv = Pᵀ·dO  [L, d]: Pᵀ's pairs are P's row pairs, read down the columns of P packed.
  pack_rows({probs, Lp}, Lq, L, Np, w.packed.data());
  pack_rows(grad_out, Lq, d, dN, w.packed_right.data());
  ops.gemm(columns_of(w.packed.data(), Np), L, Lqp, w.packed_right.data(), dN, w.narrow.data(), dN);
  ops.store_rows(w.narrow.data(), dN, L, d, 1.0f, dv);
  // dk = dSᵀ·q·scale  [L, d], the same way.
  pack_rows({ds, Lp}, Lq, L, Np, w.packed.data());
  pack_rows(q, Lq, d, dN, w.packed_right.data());
  ops.gemm(columns_of(w.packed.data(), Np), L, Lqp, w.packed_right.data(), dN, w.narrow.data(), dN);
  ops.store_rows(w.narrow.data(), dN, L, d, shape.scale, dk);
  // dq = dS·k·scale  [Lq, d].
  pack_rows(k, L, d, dN, w.packed_right.data());
  ops.gemm(rows_of({ds, Lp}), Lq, Lp, w.packed_right.data(), dN, w.narrow.data(), dN);
  ops.store_rows(w.narrow.data(), dN, Lq, d, shape.scale, dq);
}

void attention_backward(const HeadShape& shape, F32Rows q, F32Rows k, F32Rows v, const float* probs,
                        F32Rows grad_out, MutableF32Rows dq, MutableF32Rows dk, MutableF32Rows dv, float* dlogits,
                        bool accumulate_dlogits, OffsetTermGrads offset_grads) {
  const int64_t L = shape.length, Lq = shape.query_rows(), d = shape.head_size;
  const int64_t Np = round_up(L, 16), Lp = probs_stride(L), dN = round_up(d, 16);
  const Ops<float> ops;
  ScratchF32& w = scratch_f32_for(L, d);
  float* ds = w.ds.data();
  // dP = dO·vᵀ, then dS = P ∘ (dP − rowsum(P ∘ dP)).
  pack_transposed(v, L, d, Np, w.packed.data());
  ops.gemm(LeftF32{grad_out.data, grad_out.row_stride, 1}, Lq, d, w.packed.data(), Np, w.wide.data(), Np);
  softmax_backward_rows(ops, shape, w.wide.data(), Np, probs, Lp, ds, dlogits, accumulate_dlogits, offset_grads);
  // dv = Pᵀ·dO, dk = dSᵀ·q·scale: P and dS read down their columns; dq = dS·k·scale.
  pack_rows(grad_out, Lq, d, dN, w.packed_right.data());
  ops.gemm(LeftF32{probs, 1, Lp}, L, Lq, w.packed_right.data(), dN, w.narrow.data(), dN);
  ops.store_rows(w.narrow.data(), dN, L, d, 1.0f, dv);
  pack_rows(q, Lq, d, dN, w.packed_right.data());
  ops.gemm(LeftF32{ds, 1, Lp}, L, Lq, w.packed_right.data(), dN, w.narrow.data(), dN);
  ops.store_rows(w.narrow.data(), dN, L, d, shape.scale, dk);
  pack_rows(k, L, d, dN, w.packed_right.data());
  ops.gemm(LeftF32{ds, Lp, 1}, Lq, L, w.packed_right.data(), dN, w.narrow.data(), dN);
  ops.store_rows(w.narrow.data(), dN, Lq, d, shape.scale, dq);
}

}  // namespace tisa::model::kernels
