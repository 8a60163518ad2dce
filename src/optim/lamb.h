// LAMB (SPEC §7; google-research/albert lamb_optimizer.py, NVIDIA's bias-corrected form).
//
// Per tensor w with gradient g, at its step t = 1, 2, ...:
//   m ← β1·m + (1−β1)·g ;  v ← β2·v + (1−β2)·g²
//   u ← m / (√v + ε)                         bias_correction: u ← m̂ / (√v̂ + ε),
//                                             m̂ = m/(1−β1^t), v̂ = v/(1−β2^t)
//   u ← u + λ·w                              unless excluded (name has LayerNorm|layer_norm|bias)
//   r ← ‖w‖/‖u‖ if both > 0 else 1           not for excluded tensors (r = 1) unless
//                                             trust_ratio_all; norms over all elements, w before
//   w ← w − (r·lr)·u                          the update
// ALBERT: bias_correction false, trust_ratio_all false. NVIDIA/apex FusedLAMB (decay-0 groups):
// bias_correction true. NVLAMB (NVIDIA TF LAMB, apex use_nvlamb): both true.
// Global gradient clipping is not part of step(): call clip_grad_norm() first.
#pragma once
#include "optim/optimizer.h"

namespace tisa::optim {

struct LambOptions {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-6;
  double weight_decay = 0.01;
  bool bias_correction = false;
  bool trust_ratio_all = false;
  bool fused = true;  // CPU float32: the fused kernel (fused_update.h); false: per-op reference
};

class Lamb final : public Optimizer {
 public:
  Lamb(NamedParams params, LambOptions options);
  void step(double lr) override;
  const char* kind() const override { return "lamb"; }
  const LambOptions& options() const { return options_; }

  // Trust ratios r of the last step() as 0-dim float tensors (no host sync until read), by
  // parameter name; 1 for tensors the ratio is not applied to; parameters skipped by the last
  // step (no gradient) are absent.
  StateMap last_trust_ratios() const;

 private:
  LambOptions options_;
  std::vector<at::Tensor> ratios_;  // per parameter (reference path); undefined: see host_ratios_
  std::vector<double> host_ratios_; // per parameter (fused path): the ratio applied, 1 if none
  std::vector<bool> stepped_;       // parameter updated in the last step()
};

}  // namespace tisa::optim
