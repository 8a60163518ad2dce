#pragma once
// training.precision: auto resolved to what the device computes fast, once per run.
//
// `auto` is bf16 on CUDA and on a CPU with native bf16 arithmetic (common/cpu_features.h), fp32
// elsewhere: on an AVX2-only CPU LibTorch's bf16 matrix products are an order of magnitude slower
// than fp32 (docs/perf/README.md, "bf16 on a CPU without native bf16"). An explicit bf16 on such
// a CPU is kept — the user asked for it — with a warning that says what it costs.
#include <c10/core/Device.h>

#include <string>

#include "config/config.h"

namespace tisa::train {

struct PrecisionChoice {
  config::Precision precision = config::Precision::kFp32;  // never kAuto
  std::string why;                                         // for the run's log
  bool slow_bf16 = false;                                  // bf16 asked for on a CPU without native bf16
};

// The decision itself, separate from the machine so that it can be tested on any machine.
PrecisionChoice resolve_precision(config::Precision requested, bool cuda, bool cpu_native_bf16,
                                  const std::string& cpu_why);

// resolve_precision for `device` and this machine's CPU; logs the choice under `tag` ("[train]",
// "[glue]", ...) and warns about an explicit bf16 on a CPU without native bf16.
config::Precision choose_precision(config::Precision requested, const c10::Device& device, const std::string& tag);

// Whether a resolved precision runs under bf16 autocast; throws on an unresolved `auto`, so that
// no code path can silently treat it as fp32.
bool uses_bf16(config::Precision resolved);

}  // namespace tisa::train
