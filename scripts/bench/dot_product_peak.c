// Peak rate of one core's bf16 dot products (vdpbf16ps) against its f32 FMAs (vfmadd), both on
// 512-bit registers with ten independent accumulators, so that throughput, not latency, is timed.
// It tells whether bf16 matrix products can outrun f32 ones on a CPU without AMX
// (docs/perf/README.md, "bf16 on Intel without AMX").
//   gcc -O2 -mavx512f -mavx512bf16 scripts/bench/dot_product_peak.c -o /tmp/dot_product_peak && /tmp/dot_product_peak
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

#define TEN(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9)
#define DECLARE(i) __m512 c##i = _mm512_setzero_ps();
#define ZERO(i) c##i = _mm512_setzero_ps();
#define DOT(i) c##i = _mm512_dpbf16_ps(c##i, a, b);
#define FMA(i) c##i = _mm512_fmadd_ps(x, y, c##i);
#define SUM(i) sum = _mm512_add_ps(sum, c##i);

int main(void) {
  const long n = 100000000;  // loop trips; each issues ten instructions
  const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80), b = (__m512bh)_mm512_set1_epi16(0x3f80);  // 1.0
  const __m512 x = _mm512_set1_ps(1.0f), y = _mm512_set1_ps(0.5f);
  __m512 sum = _mm512_setzero_ps();
  TEN(DECLARE)
  double t = seconds();
  for (long i = 0; i < n; i++) { TEN(DOT) }
  const double dot_s = seconds() - t;
  TEN(SUM)
  TEN(ZERO)
  t = seconds();
  for (long i = 0; i < n; i++) { TEN(FMA) }
  const double fma_s = seconds() - t;
  TEN(SUM)
  // vdpbf16ps: 16 lanes x 2 products x (multiply + add); vfmadd231ps: 16 lanes x (multiply + add).
  const double dot = 10.0 * 64 * n / dot_s / 1e9, fma = 10.0 * 32 * n / fma_s / 1e9;
  printf("bf16 vdpbf16ps %.1f GFLOP/s, f32 vfmadd %.1f GFLOP/s, ratio %.2f (checksum %g)\n", dot, fma, dot / fma,
         _mm512_reduce_add_ps(sum));
  return 0;
}
