// Optimiser interface shared by LAMB and AdamW (SPEC §7), built for the trainer:
//
//   auto opt = tisa::optim::make_optimizer(cfg.optimizer, named_params);  // (HF name, tensor) pairs
//   for (int64_t t = start; t < steps; ++t) {                              // t = updates made so far
//     ... loss.backward() ...
//     at::Tensor norm = opt->clip_grad_norm(cfg.optimizer.clip_norm);     // 0-dim, no host sync
//     if (!tisa::optim::is_finite(norm)) { opt->zero_grad(); continue; }  // skip a bad step
//     opt->step(schedule.lr_at(t));                                        // see schedule.h
//     opt->zero_grad();
//   }
//
// The optimiser never owns the learning rate: step(lr) takes it, and the schedule (schedule.h)
// says which lr each update uses. Parameters whose .grad() is undefined are skipped by step():
// their moments and step count stay as they are (as torch.optim does).
//
// State for exact resume is a flat map name → tensor, ready for safetensors:
//   "m.<param name>"     first moment (same dtype/shape/device as the parameter)
//   "v.<param name>"     second moment
//   "step.<param name>"  int64 scalar (shape []): updates applied to this parameter (bias correction)
//   "num_updates"        int64 scalar: step() calls so far
// Moments are stored before any bias correction (as the goldens' step<t>.m / step<t>.v).
//
// Decay / trust-ratio exclusion: a parameter is excluded when its name contains "LayerNorm",
// "layer_norm" or "bias" (SPEC §7, ALBERT's re.search on the same three strings).
//
// All arithmetic is in-place on the parameters' own devices (CPU or CUDA); nothing here syncs
// with the host except the explicit helpers that return bool/double. On the CPU, float32
// parameters take the fused kernels of fused_update.h (one or two passes per tensor; options
// `fused = false` keeps the per-op reference path, which CUDA and other dtypes always take).
#pragma once
#include <ATen/core/Tensor.h>

#include "optim/fused_update.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tisa::config {
struct OptimizerConfig;
}

namespace tisa::optim {

using NamedParams = std::vector<std::pair<std::string, at::Tensor>>;
using StateMap = std::map<std::string, at::Tensor>;

// True when `name` contains LayerNorm, layer_norm or bias: no weight decay, no LAMB trust ratio
// (unless trust_ratio_all).
bool excluded_from_decay(const std::string& name);

class Optimizer {
 public:
  // `params`: unique names, distinct defined tensors, floating point. State (m, v) is allocated
  // here as zeros like each parameter. Throws tisa::Error on an empty name, duplicate name or
  // duplicate tensor.
  explicit Optimizer(NamedParams params);
  virtual ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update with learning rate `lr` from each parameter's .grad(); parameters without a
  // gradient are skipped. Runs under no-grad.
  virtual void step(double lr) = 0;
  virtual const char* kind() const = 0;  // "lamb" or "adamw"

  // Gradients to none (set_to_none, the default, frees them) or to zero.
  void zero_grad(bool set_to_none = true);

  // Global L2 norm of all defined gradients, before clipping, as a 0-dim float tensor on the
  // gradients' device. max_norm > 0 scales every gradient by max_norm / max(norm, max_norm)
  // (tf.clip_by_global_norm as ALBERT uses it); max_norm <= 0 only measures.
  at::Tensor clip_grad_norm(double max_norm);
  // All defined gradients finite? (one host sync; see grad_utils.h for the cheaper norm check)
  bool grads_finite() const;

  // Flat state (see the file comment). Tensors alias the live state: copy before mutating.
  StateMap state_dict() const;
  // Restores a state_dict(): every key of every parameter must be present with the right shape;
  // unknown keys are errors. Values are copied into the existing state (device/dtype kept).
  void load_state_dict(const StateMap& state);

  int64_t num_updates() const { return num_updates_; }
  const NamedParams& params() const { return params_; }
  std::vector<at::Tensor> grads() const;  // defined gradients, in parameter order

 protected:
  struct Slot {
    at::Tensor m, v;
    int64_t step = 0;
    bool excluded = false;
  };
  // The parameters this step updates (those with a defined gradient), split by path: `fused`
  // holds the ones the fused CPU kernel takes (float32, contiguous, on the CPU; only when
  // `use_fused`), `reference` the rest. Increments their step counts.
  struct ActiveParams {
    std::vector<size_t> fused, reference;
  };
  ActiveParams begin_step(bool use_fused);
  // m = β1·m + (1−β1)·g, v = β2·v + (1−β2)·g² for the reference path (multi-tensor ops).
  void update_moments(const std::vector<size_t>& indices, double beta1, double beta2);
  // Parameter, gradient and moments of parameter i as raw float arrays (fused path only).
  fused::TensorSpan span(size_t i);

  NamedParams params_;
  std::vector<Slot> slots_;
  int64_t num_updates_ = 0;
};

// LAMB or AdamW from the config (type, betas, eps, weight_decay, bias_correction, trust_ratio_all;
// lr and clip_norm are used by the caller: step(lr), clip_grad_norm(clip_norm)).
std::unique_ptr<Optimizer> make_optimizer(const config::OptimizerConfig& cfg, NamedParams params);

}  // namespace tisa::optim
