// Facts about the running LibTorch process that users need to trust a measurement: LibTorch's
// version, the BLAS library actually mapped into the process, and thread counts.
#pragma once
#include <cstdint>
#include <string>

namespace tisa::train {

struct RuntimeInfo {
  std::string torch_version;
  std::string blas_library;  // resolved path of the mapped BLAS, or "unknown"
  bool blas_is_reference = false;  // Netlib reference BLAS: far slower matrix products
  int intra_op_threads = 0;
  int inter_op_threads = 0;
  bool cuda_available = false;
  std::string omp_wait_policy;  // value of OMP_WAIT_POLICY, or "(unset)"
  // ATen's CPU kernel set in use ("AVX512", "AVX2", "DEFAULT", ...; LibTorch's show_config), or
  // "unknown". `tisa-train` asks for AVX-512 where the CPU has it (apps/tisa_train_main.cpp).
  std::string aten_cpu_capability;
  std::string allocator;  // e.g. "gperftools 2.10" (tcmalloc) or "glibc malloc, ..." (allocator_tuning.h)
};

// The value after "CPU capability usage:" in a LibTorch show_config() text, or "unknown".
std::string cpu_capability_from_config(const std::string& show_config);

RuntimeInfo runtime_info();

// Logs a loud warning when the reference BLAS or busy-waiting OpenMP is in use. Every training
// and benchmark command calls this at start-up.
void warn_about_slow_runtime();

// Sets LibTorch's intra-op threads (0 = keep its default, one per core) and warns when `threads`
// or `workers` (data loader threads) exceed the cores of this machine: oversubscribed threads
// slow training steps by far more than they add, without a word.
void apply_thread_settings(int64_t threads, int64_t workers = 0);

// Treats subnormal floats as zero in this thread's CPU arithmetic (x86 FTZ + DAZ; threads started
// later inherit it). Adam's first moment of a parameter row that gets no gradient (the word
// embeddings of pieces a GLUE task never uses) decays by beta1 every update and turns subnormal
// after ~800 of them, and division and square roots over subnormal inputs are slow
// (docs/perf/README.md, "Attention in the logits' dtype, one cast for Q/K/V, subnormals"). Values below 1.2e-38 do not
// change a trained model. Called at start-up of every LibTorch command; returns whether the CPU
// supports it.
bool flush_denormals_to_zero();

}  // namespace tisa::train
