// Global gradient norm, clipping and finiteness checks (SPEC §7: global grad-norm clip 1.0).
#include "optim/grad_utils.h"

#include <torch/torch.h>

#include <cmath>

namespace tisa::optim {

namespace {
std::vector<at::Tensor> defined_only(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> out;
  out.reserve(tensors.size());
  for (const auto& t : tensors)
    if (t.defined() && t.numel() > 0) out.push_back(t);
  return out;
}
}  // namespace

at::Tensor global_norm(const std::vector<at::Tensor>& tensors) {
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> ts = defined_only(tensors);
  if (ts.empty()) return at::zeros({}, at::kFloat);
  const auto device = ts.front().device();
  std::vector<at::Tensor> norms = at::_foreach_norm(ts);  // one [] per tensor
  for (auto& n : norms) n = n.to(device, at::kFloat);
  return at::linalg_vector_norm(at::stack(norms));      // sqrt(Σ‖g_i‖²)
}

at::Tensor clip_grad_norm(const std::vector<at::Tensor>& grads, double max_norm) {
  torch::NoGradGuard no_grad;
  at::Tensor norm = global_norm(grads);
  if (max_norm <= 0.0) return norm;
  // scale = max_norm / max(norm, max_norm): exactly 1 when norm ≤ max_norm, NaN when norm is NaN.
  at::Tensor scale = at::clamp_min(norm, max_norm).reciprocal_().mul_(max_norm);
  for (const auto& g : grads)
    if (g.defined()) g.mul_(scale.to(g.device(), g.scalar_type()));
  return norm;
}

bool is_finite(const at::Tensor& scalar) {
  return std::isfinite(scalar.item<double>());
}

bool all_finite(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> ts = defined_only(tensors);
  if (ts.empty()) return true;
  const auto device = ts.front().device();
  std::vector<at::Tensor> flags;
  flags.reserve(ts.size());
  for (const auto& t : ts) flags.push_back(at::isfinite(t).all().to(device));
  return at::stack(flags).all().item<bool>();
}

}  // namespace tisa::optim
