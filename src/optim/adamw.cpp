// AdamW update with torch.optim.AdamW's arithmetic (SPEC §7; formulas in adamw.h). CPU float32
// tensors take the fused kernel (one pass, fused_update.h); the reference path uses one temporary
// per tensor (the denominator), everything else in place.
#include "optim/adamw.h"

#include <torch/torch.h>

#include <cmath>

namespace tisa::optim {

AdamW::AdamW(NamedParams params, AdamWOptions options)
    : Optimizer(std::move(params)), options_(options) {}

void AdamW::step(double lr) {
  torch::NoGradGuard no_grad;
  const AdamWOptions& o = options_;
  const ActiveParams active = begin_step(o.fused);
  for (size_t i : active.fused) {
    const bool decays = !slots_[i].excluded && o.weight_decay != 0.0;
    fused::adamw_update(span(i), {o.beta1, o.beta2, o.eps, decays ? 1.0 - lr * o.weight_decay : 1.0,
                                  slots_[i].step, lr});
  }
  update_moments(active.reference, o.beta1, o.beta2);
  for (size_t i : active.reference) {
    at::Tensor& w = params_[i].second;
    Slot& s = slots_[i];
    // Decoupled decay first, on w before this step's update (torch order).
    if (!s.excluded && o.weight_decay != 0.0) w.mul_(1.0 - lr * o.weight_decay);
    const double t = static_cast<double>(s.step);
    const double bc1 = 1.0 - std::pow(o.beta1, t);
    const double bc2_sqrt = std::sqrt(1.0 - std::pow(o.beta2, t));
    at::Tensor denom = at::sqrt(s.v);
    denom.div_(bc2_sqrt).add_(o.eps);         // √v/√(1−β2^t) + ε
    w.addcdiv_(s.m, denom, -(lr / bc1));      // w −= (lr/(1−β1^t))·m/denom
  }
}

}  // namespace tisa::optim
