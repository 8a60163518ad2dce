// `tisa-train version`: versions, the BLAS library in use and thread counts.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>

#include "cli_nn/commands.h"
#include "common/cpu_features.h"
#include "model/cpu_linear.h"
#include "tisa_build_info.h"
#include "train/runtime_info.h"

namespace tisa::cli {

void add_version_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("version", "print versions, the BLAS library in use and thread counts");
  cmd->callback([] {
    auto info = train::runtime_info();
    std::printf("tisa-train       %s\n", TISA_VERSION);
    std::printf("LibTorch         %s\n", info.torch_version.c_str());
    std::printf("BLAS             %s%s\n", info.blas_library.c_str(),
                info.blas_is_reference ? "   <-- reference BLAS: ~30x slower, install libopenblas0-openmp" : "");
    std::printf("threads          intra-op %d, inter-op %d\n", info.intra_op_threads, info.inter_op_threads);
    std::printf("OMP_WAIT_POLICY  %s\n", info.omp_wait_policy.c_str());
    const char* coretype = std::getenv("OPENBLAS_CORETYPE");
    std::printf("OPENBLAS_CORETYPE %s\n", coretype ? coretype : "(unset: OpenBLAS detects the CPU)");
    std::printf("ATen CPU kernels %s\n", info.aten_cpu_capability.c_str());
    std::printf("allocator        %s\n", info.allocator.c_str());
    std::printf("f32 linear layers %s\n", model::f32_products_description().c_str());
    const auto& bf16 = cpu_bf16_support();
    std::printf("CPU              %s (native bf16: %s, %s; training.precision auto -> %s)\n", cpu_model_name().c_str(),
                bf16.native ? "yes" : "no", bf16.why.c_str(), bf16.fast_products ? "bf16" : "fp32");
    std::printf("CUDA             %s\n", info.cuda_available ? "available" : "not available");
  });
}

}  // namespace tisa::cli
