#include "train/runtime_info.h"

#include <ATen/Version.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <cstdlib>
#include <fstream>
#include <thread>

#include "common/allocator_tuning.h"

namespace tisa::train {
namespace {

// LibTorch loads libblas.so.3 lazily on some builds: run one product so the library is mapped,
// then read the resolved path from /proc/self/maps (Debian's alternatives symlink is resolved there).
std::string mapped_blas_path() {
  auto a = torch::ones({8, 8});
  (void)torch::mm(a, a);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  std::string found;
  while (std::getline(maps, line)) {
    auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash);
    // cuBLAS/cuBLASLt (mapped by a CUDA-enabled LibTorch) are the GPU's, not the CPU BLAS.
    if (path.find("cublas") != std::string::npos) continue;
    if (path.find("blas") != std::string::npos || path.find("mkl_") != std::string::npos) {
      // Prefer the BLAS implementation over helper libraries such as libcblas wrappers.
      if (found.empty() || path.find("libblas") != std::string::npos || path.find("openblas") != std::string::npos)
        found = path;
    }
  }
  return found.empty() ? "unknown" : found;
}

}  // namespace

std::string cpu_capability_from_config(const std::string& show_config) {
  const std::string key = "CPU capability usage:";
  const auto at = show_config.find(key);
  if (at == std::string::npos) return "unknown";
  const auto start = show_config.find_first_not_of(" \t", at + key.size());
  if (start == std::string::npos) return "unknown";
  const auto end = show_config.find_first_of(" \t\r\n", start);
  return show_config.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

RuntimeInfo runtime_info() {
  RuntimeInfo info;
#ifdef TORCH_VERSION
  info.torch_version = TORCH_VERSION;
#else
  info.torch_version = std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
                       std::to_string(TORCH_VERSION_PATCH);
#endif
  info.blas_library = mapped_blas_path();
  info.blas_is_reference = info.blas_library.find("openblas") == std::string::npos &&
                           info.blas_library.find("mkl") == std::string::npos &&
                           info.blas_library.find("blis") == std::string::npos &&
                           info.blas_library != "unknown";
  info.intra_op_threads = torch::get_num_threads();
  info.inter_op_threads = torch::get_num_interop_threads();
  info.cuda_available = torch::cuda::is_available();
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  info.omp_wait_policy = policy ? policy : "(unset)";
  info.aten_cpu_capability = cpu_capability_from_config(at::show_config());
  info.allocator = allocator_description();
  return info;
}

void warn_about_slow_runtime() {
  RuntimeInfo info = runtime_info();
  if (info.blas_is_reference)
    spdlog::warn("[runtime] the reference BLAS is in use ({}): matrix products run ~30x slower. "
                 "Install libopenblas0-openmp (scripts/setup.sh does).",
                 info.blas_library);
  if (info.omp_wait_policy == "(unset)")
    spdlog::warn("[runtime] OMP_WAIT_POLICY is unset: OpenMP busy-waiting slows small ops on "
                 "small machines. Start commands through `tisa-train`, which sets PASSIVE.");
}

void apply_thread_settings(int64_t threads, int64_t workers) {
  const int64_t cores = static_cast<int64_t>(std::thread::hardware_concurrency());
  if (cores > 0 && threads > cores)
    spdlog::warn("[runtime] training.threads is {} but this machine has {} cores: oversubscribed threads make every "
                 "step much slower (use 0 for one per core)",
                 threads, cores);
  if (cores > 0 && workers > cores)
    spdlog::warn("[runtime] data.workers is {} but this machine has {} cores: the loader threads compete with "
                 "training",
                 workers, cores);
  if (threads > 0) torch::set_num_threads(static_cast<int>(threads));
}

bool flush_denormals_to_zero() { return at::globalContext().setFlushDenormal(true); }

}  // namespace tisa::train
