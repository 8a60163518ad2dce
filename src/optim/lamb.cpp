// LAMB update (SPEC §7; formulas in lamb.h). CPU float32 tensors take the fused kernel (two
// passes, fused_update.h); the reference path works per tensor, in place on the parameter's
// device: one temporary u the size of the parameter, plus a few 0-dim tensors for norms and the
// ratio, so no host sync happens inside step().
#include "optim/lamb.h"

#include <torch/torch.h>

#include <cmath>

#include "common/error.h"

namespace tisa::optim {

Lamb::Lamb(NamedParams params, LambOptions options)
    : Optimizer(std::move(params)), options_(options) {
  ratios_.resize(params_.size());
  host_ratios_.assign(params_.size(), 1.0);
  stepped_.assign(params_.size(), false);
}

void Lamb::step(double lr) {
  torch::NoGradGuard no_grad;
  const LambOptions& o = options_;
  std::fill(stepped_.begin(), stepped_.end(), false);
  for (auto& r : ratios_) r = at::Tensor();
  const ActiveParams active = begin_step(o.fused);
  for (size_t i : active.fused) {
    stepped_[i] = true;
    const bool excluded = slots_[i].excluded;
    host_ratios_[i] = fused::lamb_update(
        span(i), {o.beta1, o.beta2, o.eps, o.weight_decay, o.bias_correction, slots_[i].step,
                  /*decay=*/!excluded, /*trust_ratio=*/!excluded || o.trust_ratio_all, lr});
  }
  update_moments(active.reference, o.beta1, o.beta2);
  for (size_t i : active.reference) {
    at::Tensor& w = params_[i].second;
    Slot& s = slots_[i];
    stepped_[i] = true;
    // u = m/(√v + ε), or m̂/(√v̂ + ε) with m̂ = m/(1−β1^t), v̂ = v/(1−β2^t).
    at::Tensor u;
    if (o.bias_correction) {
      const double bc1 = 1.0 - std::pow(o.beta1, static_cast<double>(s.step));
      const double bc2 = 1.0 - std::pow(o.beta2, static_cast<double>(s.step));
      u = at::div(s.v, bc2);
      u.sqrt_().add_(o.eps);
      at::div_out(u, s.m, u);  // m/(√v̂+ε), written over the denominator
      u.div_(bc1);
    } else {
      u = at::sqrt(s.v);
      u.add_(o.eps);
      at::div_out(u, s.m, u);
    }
    if (!s.excluded && o.weight_decay != 0.0) u.add_(w, o.weight_decay);  // u += λ·w
    if (s.excluded && !o.trust_ratio_all) {
      w.sub_(u, lr);  // r = 1
      host_ratios_[i] = 1.0;
      continue;
    }
    // r = ‖w‖/‖u‖ when both norms are > 0, else 1 (where() never propagates the unused 0/0).
    at::Tensor w_norm = at::linalg_vector_norm(w);  // [] over all elements
    at::Tensor u_norm = at::linalg_vector_norm(u);
    at::Tensor ratio = at::where(at::logical_and(w_norm.gt(0), u_norm.gt(0)),
                                 at::div(w_norm, u_norm), at::ones_like(w_norm));
    u.mul_(ratio * lr);  // (r·lr)·u, TensorFlow's order
    w.sub_(u);
    ratios_[i] = std::move(ratio);
  }
}

StateMap Lamb::last_trust_ratios() const {
  StateMap out;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!stepped_[i]) continue;
    out[params_[i].first] = ratios_[i].defined()
                                ? ratios_[i]
                                : at::full({}, host_ratios_[i], params_[i].second.options());
  }
  return out;
}

}  // namespace tisa::optim
