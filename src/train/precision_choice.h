#pragma once
// training.precision: auto resolved to what the device computes fast, once per run.
//
// `auto` is bf16 on CUDA and on a CPU whose bf16 matrix products outrun its f32 ones (AMX, or
// AVX512_BF16 on AMD: common/cpu_features.h), fp32 elsewhere. On an AVX2-only CPU LibTorch's bf16
// products are an order of magnitude slower than fp32 ("bf16 on a CPU without native bf16" in
// docs/perf/README.md); on an Intel CPU with AVX512_BF16 but no AMX they run at about half f32's
// rate ("bf16 on Intel without AMX"). An explicit bf16 is kept — the user asked for it — with a
// warning where the CPU emulates it, and a note where fp32 would be faster.
#include <c10/core/Device.h>

#include <string>

#include "common/cpu_features.h"
#include "config/config.h"

namespace tisa::train {

struct PrecisionChoice {
  config::Precision precision = config::Precision::kFp32;  // never kAuto
  std::string why;                                         // for the run's log
  bool slow_bf16 = false;                                  // bf16 asked for on a CPU without native bf16
};

// The decision itself, separate from the machine so that it can be tested on any machine.
PrecisionChoice resolve_precision(config::Precision requested, bool cuda, const CpuBf16Support& cpu);

// resolve_precision for `device` and this machine's CPU; logs the choice under `tag` ("[train]",
// "[glue]", ...) and warns about an explicit bf16 on a CPU without native bf16.
config::Precision choose_precision(config::Precision requested, const c10::Device& device, const std::string& tag);

// Whether a resolved precision runs under bf16 autocast; throws on an unresolved `auto`, so that
// no code path can silently treat it as fp32.
bool uses_bf16(config::Precision resolved);

}  // namespace tisa::train
