// Gradient helpers for the training loop: global L2 norm, global-norm clipping, finiteness checks.
//
// The norm and the clip stay on the device (no host sync); is_finite()/all_finite() sync once.
#pragma once
#include <ATen/core/Tensor.h>

#include <vector>

namespace tisa::optim {

// sqrt(Σ‖g‖²) over the defined tensors, as a 0-dim float32 tensor on the first tensor's device
// (CPU zero when there is none).
at::Tensor global_norm(const std::vector<at::Tensor>& tensors);

// Clips in place by the global norm, as tf.clip_by_global_norm (ALBERT's create_optimizer):
//   g ← g · max_norm / max(‖g‖, max_norm)
// and returns the norm before clipping (0-dim float32). max_norm <= 0: measure only. A non-finite
// norm makes every gradient non-finite (as TensorFlow's does); check is_finite(norm) and skip.
at::Tensor clip_grad_norm(const std::vector<at::Tensor>& grads, double max_norm);

// Value of a 0-dim tensor is finite (one host sync). A NaN/Inf anywhere in the gradients makes
// their global norm non-finite, so is_finite(global_norm(g)) is the cheap check (it also flags a
// sum of squares overflowing float32, i.e. |g| beyond ~1e19).
bool is_finite(const at::Tensor& scalar);

// Every element of every defined tensor finite (exact; one host sync).
bool all_finite(const std::vector<at::Tensor>& tensors);

}  // namespace tisa::optim
