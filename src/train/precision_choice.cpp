// training.precision auto → bf16 or fp32 from the device; see precision_choice.h.
#include "train/precision_choice.h"

#include <spdlog/spdlog.h>

#include "common/cpu_features.h"
#include "common/error.h"
#include "model/cpu_linear.h"

namespace tisa::train {

PrecisionChoice resolve_precision(config::Precision requested, bool cuda, const CpuBf16Support& cpu) {
  using config::Precision;
  switch (requested) {
    case Precision::kFp32: return {Precision::kFp32, "fp32 (as configured)", false};
    case Precision::kBf16:
      if (cuda || cpu.fast_products) return {Precision::kBf16, "bf16 (as configured)", false};
      if (cpu.native) return {Precision::kBf16, "bf16 (as configured; fp32 is faster on this CPU: " + cpu.why + ")", false};
      return {Precision::kBf16, "bf16 (as configured) on a CPU without native bf16: " + cpu.why, true};
    case Precision::kAuto:
      if (cuda) return {Precision::kBf16, "auto -> bf16 (CUDA)", false};
      if (cpu.fast_products) return {Precision::kBf16, "auto -> bf16 (CPU with " + cpu.why + ")", false};
      if (cpu.native) return {Precision::kFp32, "auto -> fp32 (CPU with " + cpu.why + ")", false};
      return {Precision::kFp32, "auto -> fp32 (CPU without native bf16: " + cpu.why + ")", false};
  }
  throw Error("training.precision: unknown value");
}

config::Precision choose_precision(config::Precision requested, const c10::Device& device, const std::string& tag) {
  const CpuBf16Support& cpu = cpu_bf16_support();
  const PrecisionChoice choice = resolve_precision(requested, device.is_cuda(), cpu);
  if (choice.slow_bf16)
    spdlog::warn("{} training.precision bf16 on {} ({}): LibTorch emulates bf16 matrix products on such a CPU, "
                 "11-18x slower than fp32 on the cpu paper scale (measured on an AMD EPYC, AVX2). Use precision: auto or fp32.",
                 tag, cpu_model_name(), cpu.why);
  else if (requested == config::Precision::kAuto ||
           (requested == config::Precision::kBf16 && !device.is_cuda() && !cpu.fast_products))
    spdlog::info("{} precision {}", tag, choice.why);
  if (choice.precision == config::Precision::kFp32 && !device.is_cuda())
    spdlog::info("{} float32 linear layers: {}", tag, model::f32_products_description());
  return choice.precision;
}

bool uses_bf16(config::Precision resolved) {
  if (resolved == config::Precision::kAuto)
    throw Error("internal: training.precision auto reached the model unresolved (call choose_precision first)");
  return resolved == config::Precision::kBf16;
}

}  // namespace tisa::train
