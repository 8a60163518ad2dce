// Optimizer base: parameter bookkeeping, moment updates, zero_grad, clipping, state save/load,
// and the config factory (SPEC §7).
#include "optim/optimizer.h"

#include <torch/torch.h>

#include <set>
#include <unordered_set>

#include "common/error.h"
#include "config/config.h"
#include "optim/adamw.h"
#include "optim/grad_utils.h"
#include "optim/lamb.h"

namespace tisa::optim {

bool excluded_from_decay(const std::string& name) {
  for (const char* key : {"LayerNorm", "layer_norm", "bias"})
    if (name.find(key) != std::string::npos) return true;
  return false;
}

Optimizer::Optimizer(NamedParams params) : params_(std::move(params)) {
  std::set<std::string> names;
  std::unordered_set<const void*> impls;
  slots_.reserve(params_.size());
  for (const auto& [name, p] : params_) {
    if (name.empty()) throw Error("optimizer: a parameter has an empty name");
    if (!p.defined()) throw Error("optimizer: parameter '" + name + "' is an undefined tensor");
    if (!p.is_floating_point())
      throw Error("optimizer: parameter '" + name + "' is not floating point");
    if (!names.insert(name).second) throw Error("optimizer: duplicate parameter name '" + name + "'");
    if (!impls.insert(p.unsafeGetTensorImpl()).second)
      throw Error("optimizer: parameter '" + name + "' is the same tensor as an earlier one "
                  "(pass shared parameters once)");
    Slot s;
    s.m = at::zeros_like(p);
    s.v = at::zeros_like(p);
    s.excluded = excluded_from_decay(name);
    slots_.push_back(std::move(s));
  }
}

Optimizer::~Optimizer() = default;

namespace {
// The fused kernel's preconditions: float32 CPU arrays it may read and write directly.
bool fusable(const at::Tensor& t) {
  return t.device().is_cpu() && t.scalar_type() == at::kFloat && t.is_contiguous();
}
}  // namespace

Optimizer::ActiveParams Optimizer::begin_step(bool use_fused) {
  ActiveParams active;
  for (size_t i = 0; i < params_.size(); ++i) {
    const at::Tensor& p = params_[i].second;
    const at::Tensor& g = p.grad();
    if (!g.defined()) continue;
    TORCH_CHECK(g.sizes() == p.sizes(), "gradient of ", params_[i].first, " has shape ", g.sizes(),
                ", parameter ", p.sizes());
    const bool fused = use_fused && fusable(p) && fusable(g) && fusable(slots_[i].m) && fusable(slots_[i].v);
    (fused ? active.fused : active.reference).push_back(i);
    ++slots_[i].step;
  }
  ++num_updates_;
  return active;
}

void Optimizer::update_moments(const std::vector<size_t>& indices, double beta1, double beta2) {
  if (indices.empty()) return;
  std::vector<at::Tensor> ms, vs, gs;
  for (size_t i : indices) {
    ms.push_back(slots_[i].m);
    vs.push_back(slots_[i].v);
    gs.push_back(params_[i].second.grad());
  }
  // Multi-tensor ops: one fused launch per op on CUDA, a per-tensor loop on CPU.
  at::_foreach_mul_(ms, beta1);
  at::_foreach_add_(ms, gs, 1.0 - beta1);          // m = β1·m + (1−β1)·g
  at::_foreach_mul_(vs, beta2);
  at::_foreach_addcmul_(vs, gs, gs, 1.0 - beta2);  // v = β2·v + (1−β2)·g²
}

fused::TensorSpan Optimizer::span(size_t i) {
  at::Tensor& p = params_[i].second;
  // The kernel writes through raw pointers: count the write as an in-place op would, so autograd
  // still notices a graph that saved the old value.
  p.unsafeGetTensorImpl()->bump_version();
  return {p.data_ptr<float>(), p.grad().data_ptr<float>(), slots_[i].m.data_ptr<float>(),
          slots_[i].v.data_ptr<float>(), p.numel()};
}

void Optimizer::zero_grad(bool set_to_none) {
  for (auto& [name, p] : params_) {
    (void)name;
    at::Tensor& g = p.mutable_grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      g.reset();
    } else {
      g = g.detach();
      g.zero_();
    }
  }
}

std::vector<at::Tensor> Optimizer::grads() const {
  std::vector<at::Tensor> out;
  out.reserve(params_.size());
  for (const auto& [name, p] : params_) {
    (void)name;
    if (p.grad().defined()) out.push_back(p.grad());
  }
  return out;
}

at::Tensor Optimizer::clip_grad_norm(double max_norm) {
  torch::NoGradGuard no_grad;
  return optim::clip_grad_norm(grads(), max_norm);
}

bool Optimizer::grads_finite() const { return all_finite(grads()); }

StateMap Optimizer::state_dict() const {
  StateMap out;
  for (size_t i = 0; i < params_.size(); ++i) {
    const std::string& name = params_[i].first;
    out["m." + name] = slots_[i].m;
    out["v." + name] = slots_[i].v;
    out["step." + name] = at::scalar_tensor(slots_[i].step, at::kLong);
  }
  out["num_updates"] = at::scalar_tensor(num_updates_, at::kLong);
  return out;
}

namespace {
const at::Tensor& require(const StateMap& state, const std::string& key, at::IntArrayRef shape) {
  auto it = state.find(key);
  if (it == state.end()) throw Error("optimizer state: missing tensor '" + key + "'");
  if (!it->second.defined() || it->second.sizes() != shape) {
    std::string got = it->second.defined() ? c10::str(it->second.sizes()) : "undefined";
    throw Error("optimizer state: tensor '" + key + "' has shape " + got + ", expected " +
                c10::str(shape));
  }
  return it->second;
}
int64_t scalar_int(const at::Tensor& t, const std::string& key) {
  if (t.is_floating_point() || t.is_complex())
    throw Error("optimizer state: '" + key + "' must be an integer scalar");
  int64_t value = t.item<int64_t>();
  if (value < 0) throw Error("optimizer state: '" + key + "' is negative");
  return value;
}
}  // namespace

void Optimizer::load_state_dict(const StateMap& state) {
  torch::NoGradGuard no_grad;
  std::set<std::string> known{"num_updates"};
  // Validate everything before changing anything.
  std::vector<int64_t> steps(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    const auto& [name, p] = params_[i];
    require(state, "m." + name, p.sizes());
    require(state, "v." + name, p.sizes());
    steps[i] = scalar_int(require(state, "step." + name, {}), "step." + name);
    known.insert({"m." + name, "v." + name, "step." + name});
  }
  int64_t updates = scalar_int(require(state, "num_updates", {}), "num_updates");
  for (const auto& [key, value] : state) {
    (void)value;
    if (!known.count(key))
      throw Error("optimizer state: unknown tensor '" + key + "' (no parameter of that name)");
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    const std::string& name = params_[i].first;
    slots_[i].m.copy_(state.at("m." + name));
    slots_[i].v.copy_(state.at("v." + name));
    slots_[i].step = steps[i];
  }
  num_updates_ = updates;
}

std::unique_ptr<Optimizer> make_optimizer(const config::OptimizerConfig& cfg, NamedParams params) {
  if (cfg.beta1 < 0 || cfg.beta1 >= 1 || cfg.beta2 < 0 || cfg.beta2 >= 1)
    throw Error("optimizer.beta1/beta2: expected values in [0, 1)");
  if (cfg.eps < 0) throw Error("optimizer.eps: expected >= 0");
  if (cfg.weight_decay < 0) throw Error("optimizer.weight_decay: expected >= 0");
  switch (cfg.type) {
    case config::OptimizerType::kLamb: {
      LambOptions o;
      o.beta1 = cfg.beta1;
      o.beta2 = cfg.beta2;
      o.eps = cfg.eps;
      o.weight_decay = cfg.weight_decay;
      o.bias_correction = cfg.bias_correction;
      o.trust_ratio_all = cfg.trust_ratio_all;
      o.fused = cfg.fused;
      return std::make_unique<Lamb>(std::move(params), o);
    }
    case config::OptimizerType::kAdamW: {
      AdamWOptions o;
      o.beta1 = cfg.beta1;
      o.beta2 = cfg.beta2;
      o.eps = cfg.eps;
      o.weight_decay = cfg.weight_decay;
      o.fused = cfg.fused;
      return std::make_unique<AdamW>(std::move(params), o);
    }
  }
  throw Error("optimizer.type: unknown optimiser");
}

}  // namespace tisa::optim
