// bf16 autocast for forward passes (TrainingConfig::precision = bf16): an RAII scope that turns
// LibTorch's autocast on for the device type of `device` with dtype bfloat16 and restores the
// previous state on exit. Matmuls/linears then run in bf16 while softmax, LayerNorm and losses stay
// in float32 (autocast's own op lists). Uses at::autocast's per-device-type setters on
// LibTorch ≥ 2.4 and the CPU/GPU-specific ones before (1.13 … 2.3), selected by TORCH_VERSION_*.
#pragma once
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <optional>

namespace tisa::model {

class AutocastScope {
 public:
  AutocastScope(const c10::Device& device, bool enabled);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  bool cuda_ = false;
  bool previous_enabled_ = false;
  c10::ScalarType previous_dtype_ = c10::ScalarType::BFloat16;
};

// The dtype autocast casts matrix-product inputs to on `device`'s type, or nullopt when autocast
// is off there. Lets a module cast an activation once where autocast would cast it per consumer.
std::optional<c10::ScalarType> autocast_dtype(const c10::Device& device);

}  // namespace tisa::model
