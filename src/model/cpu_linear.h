// Linear layers y = x·Wᵀ + b, and which library runs their float32 products on the CPU.
//
// LibTorch sends a float32 linear layer to its BLAS. Debian's LibTorch uses OpenBLAS, which runs
// the research-scale shapes (4096 rows × 128–512) at ~100–150 GFLOP/s on an AVX-512 Xeon where
// oneDNN's sgemm, the library that same LibTorch already links for its bf16 products, runs them at
// ~160–200 (docs/perf/README.md, "Float32 products through oneDNN"). Where this build links the
// system's oneDNN (TISA_HAVE_ONEDNN_SGEMM) and the CPU has AVX-512, float32 linear layers run
// their forward and backward products there; otherwise, and under autocast, through at::linear.
#pragma once
#include <ATen/core/Tensor.h>

#include <string>

namespace tisa::model {

enum class F32Products { kAuto, kBlas, kOneDnn };

// Whether this build can run float32 products through oneDNN's sgemm.
bool onednn_sgemm_built();

// The library float32 linear layers use in this process, kAuto resolved: kOneDnn where it is built
// and the CPU has AVX-512 F/BW/VL, else kBlas. A rule on the build and instruction sets, not a
// timing, so that a run's arithmetic is the same every time on one machine.
F32Products f32_products();
// Sets it for the process (kAuto: the rule). kOneDnn where it is not built is an error.
void set_f32_products(F32Products products);
// "blas", "onednn" or "auto"; and back (an unknown name is an error that names the choices).
std::string f32_products_name(F32Products products);
F32Products f32_products_from_name(const std::string& name);
// One line for logs and bench headers: what float32 products run on, and why.
std::string f32_products_description();

// x [..., in] · weight [out, in]ᵀ + bias [out] (bias may be undefined), over x's last dimension as
// one 2-D product. Float32 CPU tensors outside autocast go to f32_products()'s library; everything
// else (bf16, CUDA, autocast) to at::linear.
at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

}  // namespace tisa::model
