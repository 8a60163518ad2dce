// bf16 autocast scope; see autocast.h.
#include "model/autocast.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#define TISA_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace tisa::model {

AutocastScope::AutocastScope(const c10::Device& device, bool enabled) {
  if (!enabled) return;
  active_ = true;
  cuda_ = device.is_cuda();
#if TISA_TORCH_AT_LEAST(2, 4)
  const auto type = cuda_ ? c10::DeviceType::CUDA : c10::DeviceType::CPU;
  previous_enabled_ = at::autocast::is_autocast_enabled(type);
  previous_dtype_ = at::autocast::get_autocast_dtype(type);
  at::autocast::set_autocast_dtype(type, at::kBFloat16);
  at::autocast::set_autocast_enabled(type, true);
#else
  if (cuda_) {
    previous_enabled_ = at::autocast::is_enabled();
    previous_dtype_ = at::autocast::get_autocast_gpu_dtype();
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
    at::autocast::set_enabled(true);
  } else {
    previous_enabled_ = at::autocast::is_cpu_enabled();
    previous_dtype_ = at::autocast::get_autocast_cpu_dtype();
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
    at::autocast::set_cpu_enabled(true);
  }
#endif
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
#if TISA_TORCH_AT_LEAST(2, 4)
  const auto type = cuda_ ? c10::DeviceType::CUDA : c10::DeviceType::CPU;
  at::autocast::set_autocast_enabled(type, previous_enabled_);
  at::autocast::set_autocast_dtype(type, previous_dtype_);
#else
  if (cuda_) {
    at::autocast::set_enabled(previous_enabled_);
    at::autocast::set_autocast_gpu_dtype(previous_dtype_);
  } else {
    at::autocast::set_cpu_enabled(previous_enabled_);
    at::autocast::set_autocast_cpu_dtype(previous_dtype_);
  }
#endif
}

std::optional<c10::ScalarType> autocast_dtype(const c10::Device& device) {
  const bool cuda = device.is_cuda();
  if (!cuda && !device.is_cpu()) return std::nullopt;
#if TISA_TORCH_AT_LEAST(2, 4)
  const auto type = cuda ? c10::DeviceType::CUDA : c10::DeviceType::CPU;
  if (!at::autocast::is_autocast_enabled(type)) return std::nullopt;
  return at::autocast::get_autocast_dtype(type);
#else
  if (cuda) {
    if (!at::autocast::is_enabled()) return std::nullopt;
    return at::autocast::get_autocast_gpu_dtype();
  }
  if (!at::autocast::is_cpu_enabled()) return std::nullopt;
  return at::autocast::get_autocast_cpu_dtype();
#endif
}

}  // namespace tisa::model
