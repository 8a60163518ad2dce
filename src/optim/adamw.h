// AdamW with torch.optim.AdamW semantics (SPEC §7; torch 1.13 single-tensor path):
//   w ← w·(1 − lr·λ)                       λ = 0 for excluded names (LayerNorm|layer_norm|bias)
//   m ← β1·m + (1−β1)·g ;  v ← β2·v + (1−β2)·g²
//   w ← w − (lr/(1−β1^t)) · m / (√v/√(1−β2^t) + ε)   (ε added after the bias correction of √v)
// t counts the updates of each parameter (1 at its first). Gradient clipping is the caller's
// (clip_grad_norm()).
#pragma once
#include "optim/optimizer.h"

namespace tisa::optim {

struct AdamWOptions {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-6;
  double weight_decay = 0.01;
  bool fused = true;  // CPU float32: the fused kernel (fused_update.h); false: per-op reference
};

class AdamW final : public Optimizer {
 public:
  AdamW(NamedParams params, AdamWOptions options);
  void step(double lr) override;
  const char* kind() const override { return "adamw"; }
  const AdamWOptions& options() const { return options_; }

 private:
  AdamWOptions options_;
};

}  // namespace tisa::optim
