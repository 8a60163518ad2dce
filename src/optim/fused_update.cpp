// Fused LAMB / AdamW passes over float32 arrays; see fused_update.h. Compiled with
// -fno-math-errno (CMakeLists.txt) so that sqrtf vectorises.
#include "optim/fused_update.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace tisa::optim::fused {
namespace {

constexpr int kLanes = 16;  // independent accumulators: the compiler vectorises the lanes

// Runs body(begin, end, chunk) over [0, n) in kChunk pieces, chunks in parallel.
template <class Body>
void for_each_chunk(int64_t n, const Body& body) {
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  if (chunks <= 1) {
    if (n > 0) body(0, n, 0);
    return;
  }
  at::parallel_for(0, chunks, 1, [&](int64_t first, int64_t last) {
    for (int64_t c = first; c < last; ++c) body(c * kChunk, std::min(n, (c + 1) * kChunk), c);
  });
}

// Loop-invariant constants of one LAMB tensor update, copied into each loop by value (so the
// compiler sees they do not alias the arrays and vectorises).
struct LambConstants {
  float b1, a1, b2, a2;  // β1, 1−β1, β2, 1−β2
  float eps, bc1, bc2, wd;
};

// u for one element whose moments are already updated: m/(√v + ε), or m̂/(√v̂ + ε) with bias
// correction, + λ·w with decay. The reference's operation order (lamb.cpp).
template <bool kBiasCorrection, bool kDecay>
inline float direction(float m, float v, float w, const LambConstants& c) {
  float u = kBiasCorrection ? (m / (std::sqrt(v / c.bc2) + c.eps)) / c.bc1 : m / (std::sqrt(v) + c.eps);
  if (kDecay) u = u + c.wd * w;
  return u;
}

// Moments of element k updated in place (m = β1·m + (1−β1)·g, v = β2·v + (1−β2)·g²); returns its u.
template <bool kBiasCorrection, bool kDecay>
inline float update_moments(float* __restrict__ m, float* __restrict__ v, const float* __restrict__ g,
                            const float* __restrict__ w, int64_t k, const LambConstants& c) {
  const float mk = m[k] * c.b1 + c.a1 * g[k];
  const float vk = v[k] * c.b2 + c.a2 * g[k] * g[k];
  m[k] = mk;
  v[k] = vk;
  return direction<kBiasCorrection, kDecay>(mk, vk, w[k], c);
}

// Pass 1 over [begin, end): moments, then either the step w −= lr·u (no trust ratio) or Σw², Σu².
template <bool kBiasCorrection, bool kDecay, bool kTrustRatio>
void lamb_pass1(float* __restrict__ w, const float* __restrict__ g, float* __restrict__ m,
                float* __restrict__ v, int64_t begin, int64_t end, const LambConstants c, const float lr,
                double* w_sq, double* u_sq) {
  if (!kTrustRatio) {
    for (int64_t i = begin; i < end; ++i) w[i] = w[i] - lr * update_moments<kBiasCorrection, kDecay>(m, v, g, w, i, c);
    return;
  }
  // Per block of kLanes elements: the update into a small buffer, then the squares into kLanes
  // independent double accumulators (a fixed summation order the compiler can vectorise).
  double acc_w[kLanes] = {}, acc_u[kLanes] = {};
  float ub[kLanes], wb[kLanes];
  for (int64_t i = begin; i < end; i += kLanes) {
    const int len = static_cast<int>(std::min<int64_t>(kLanes, end - i));
    if (len < kLanes)
      for (int j = 0; j < kLanes; ++j) ub[j] = wb[j] = 0.0f;  // the tail's unused lanes add 0
    if (len == kLanes) {  // a constant trip count, so that the compiler vectorises the block
      for (int j = 0; j < kLanes; ++j) wb[j] = w[i + j], ub[j] = update_moments<kBiasCorrection, kDecay>(m, v, g, w, i + j, c);
    } else {
      for (int j = 0; j < len; ++j) wb[j] = w[i + j], ub[j] = update_moments<kBiasCorrection, kDecay>(m, v, g, w, i + j, c);
    }
    for (int j = 0; j < kLanes; ++j) {
      acc_w[j] += static_cast<double>(wb[j]) * static_cast<double>(wb[j]);
      acc_u[j] += static_cast<double>(ub[j]) * static_cast<double>(ub[j]);
    }
  }
  double sw = 0, su = 0;
  for (int j = 0; j < kLanes; ++j) {
    sw += acc_w[j];
    su += acc_u[j];
  }
  *w_sq = sw;
  *u_sq = su;
}

// Pass 2 over [begin, end): u again (same inputs, same arithmetic) and w −= u·(r·lr).
template <bool kBiasCorrection, bool kDecay>
void lamb_pass2(float* __restrict__ w, const float* __restrict__ m, const float* __restrict__ v,
                int64_t begin, int64_t end, const LambConstants c, const float scale) {
  for (int64_t i = begin; i < end; ++i)
    w[i] = w[i] - direction<kBiasCorrection, kDecay>(m[i], v[i], w[i], c) * scale;
}

// Calls f.template operator()<kBiasCorrection, kDecay>() for the runtime pair (bc, decay).
template <class F>
void dispatch(bool bc, bool decay, const F& f) {
  if (bc) {
    if (decay) f(std::true_type{}, std::true_type{});
    else f(std::true_type{}, std::false_type{});
  } else {
    if (decay) f(std::false_type{}, std::true_type{});
    else f(std::false_type{}, std::false_type{});
  }
}

}  // namespace

double lamb_update(const TensorSpan& t, const LambStep& s) {
  const double step = static_cast<double>(s.step);
  const LambConstants c{static_cast<float>(s.beta1), static_cast<float>(1.0 - s.beta1),
                        static_cast<float>(s.beta2), static_cast<float>(1.0 - s.beta2),
                        static_cast<float>(s.eps),   static_cast<float>(1.0 - std::pow(s.beta1, step)),
                        static_cast<float>(1.0 - std::pow(s.beta2, step)),
                        static_cast<float>(s.weight_decay)};
  const bool decay = s.decay && s.weight_decay != 0.0;
  const float lr = static_cast<float>(s.lr);
  const int64_t chunks = (t.n + kChunk - 1) / kChunk;
  std::vector<double> w_sq(static_cast<size_t>(chunks), 0.0), u_sq(static_cast<size_t>(chunks), 0.0);

  // Pass 1: moments and u; without the trust ratio the step itself, with it the two norms.
  dispatch(s.bias_correction, decay, [&](auto bc, auto dec) {
    for_each_chunk(t.n, [&](int64_t begin, int64_t end, int64_t k) {
      double* ws = &w_sq[static_cast<size_t>(k)];
      double* us = &u_sq[static_cast<size_t>(k)];
      if (s.trust_ratio)
        lamb_pass1<decltype(bc)::value, decltype(dec)::value, true>(t.w, t.g, t.m, t.v, begin, end, c, lr, ws, us);
      else
        lamb_pass1<decltype(bc)::value, decltype(dec)::value, false>(t.w, t.g, t.m, t.v, begin, end, c, lr, ws, us);
    });
  });
  if (!s.trust_ratio) return 1.0;

  // r = ‖w‖/‖u‖ when both are > 0 (norms rounded to float, as the reference's float tensors).
  double sw = 0, su = 0;
  for (int64_t k = 0; k < chunks; ++k) {
    sw += w_sq[static_cast<size_t>(k)];
    su += u_sq[static_cast<size_t>(k)];
  }
  const float w_norm = static_cast<float>(std::sqrt(sw)), u_norm = static_cast<float>(std::sqrt(su));
  const float ratio = (w_norm > 0 && u_norm > 0) ? w_norm / u_norm : 1.0f;
  const float scale = ratio * lr;  // (r·lr), TensorFlow's order

  // Pass 2: recompute u and step.
  dispatch(s.bias_correction, decay, [&](auto bc, auto dec) {
    for_each_chunk(t.n, [&](int64_t begin, int64_t end, int64_t) {
      lamb_pass2<decltype(bc)::value, decltype(dec)::value>(t.w, t.m, t.v, begin, end, c, scale);
    });
  });
  return ratio;
}

namespace {

// One AdamW pass over [begin, end) (the reference's operation order, adamw.cpp).
template <bool kDecay>
void adamw_pass(float* __restrict__ w, const float* __restrict__ g, float* __restrict__ m,
                float* __restrict__ v, int64_t begin, int64_t end, const float b1, const float a1,
                const float b2, const float a2, const float bc2_sqrt, const float eps,
                const float step_size, const float decay) {
  for (int64_t i = begin; i < end; ++i) {
    const float wi = kDecay ? w[i] * decay : w[i];  // decoupled decay first (torch order)
    const float mi = m[i] * b1 + a1 * g[i];
    const float vi = v[i] * b2 + a2 * g[i] * g[i];
    m[i] = mi;
    v[i] = vi;
    w[i] = wi + step_size * (mi / (std::sqrt(vi) / bc2_sqrt + eps));  // √v/√(1−β2^t) + ε
  }
}

}  // namespace

void adamw_update(const TensorSpan& t, const AdamWStep& s) {
  const float b1 = static_cast<float>(s.beta1), a1 = static_cast<float>(1.0 - s.beta1);
  const float b2 = static_cast<float>(s.beta2), a2 = static_cast<float>(1.0 - s.beta2);
  const double step = static_cast<double>(s.step);
  const float bc2_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(s.beta2, step)));
  const float eps = static_cast<float>(s.eps);
  const float step_size = static_cast<float>(-(s.lr / (1.0 - std::pow(s.beta1, step))));
  const float decay = static_cast<float>(s.decay_factor);
  for_each_chunk(t.n, [&](int64_t begin, int64_t end, int64_t) {
    if (s.decay_factor != 1.0)
      adamw_pass<true>(t.w, t.g, t.m, t.v, begin, end, b1, a1, b2, a2, bc2_sqrt, eps, step_size, decay);
    else
      adamw_pass<false>(t.w, t.g, t.m, t.v, begin, end, b1, a1, b2, a2, bc2_sqrt, eps, step_size, decay);
  });
}

}  // namespace tisa::optim::fused
