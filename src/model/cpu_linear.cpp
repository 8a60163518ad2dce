// Linear layers and their float32 products' library; see cpu_linear.h.
#include "model/cpu_linear.h"

#include <ATen/record_function.h>
#include <torch/torch.h>

#include <atomic>

#include "common/bf16.h"
#include "common/error.h"
#include "model/autocast.h"

#if TISA_HAVE_ONEDNN_SGEMM
#include <dnnl.h>
#include <omp.h>
#endif

namespace tisa::model {
namespace {

bool cpu_runs_avx512() {
#if TISA_HAVE_AVX512_KERNELS
  return avx512::cpu_has_avx512();
#else
  return false;
#endif
}

F32Products resolved(F32Products p) {
  if (p != F32Products::kAuto) return p;
  return onednn_sgemm_built() && cpu_runs_avx512() ? F32Products::kOneDnn : F32Products::kBlas;
}

std::atomic<F32Products> g_products{resolved(F32Products::kAuto)};

#if TISA_HAVE_ONEDNN_SGEMM
// Row-major C[M, N] = op(A)·op(B) + beta·C ('N' or 'T' for op), on LibTorch's intra-op thread
// count: oneDNN reads OpenMP's, which at::set_num_threads sets only on the thread that called it.
void sgemm(char trans_a, char trans_b, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B,
           int64_t ldb, float beta, float* C, int64_t ldc) {
  // Named for profilers (bench --profile counts it as a BLAS call of 2·M·N·K flops).
  RECORD_FUNCTION("tisa::sgemm", std::vector<c10::IValue>({c10::IValue(M), c10::IValue(N), c10::IValue(K)}));
  const int threads = at::get_num_threads();
  if (omp_get_max_threads() != threads) omp_set_num_threads(threads);
  const auto status = dnnl_sgemm(trans_a, trans_b, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc);
  TORCH_CHECK(status == dnnl_success, "oneDNN sgemm failed (status ", static_cast<int>(status), ") for ", M, "x",
              N, "x", K);
}

// x [M, K] · W [N, K]ᵀ + b through sgemm, with its backward: dx = dy·W, dW = dyᵀ·x, db = Σ_rows dy.
// bias: empty for none (LibTorch 1.13's autograd functions take no undefined tensor).
struct OneDnnLinearFunction : torch::autograd::Function<OneDnnLinearFunction> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, at::Tensor x,
                                                at::Tensor weight, at::Tensor bias) {
    x = x.contiguous();
    weight = weight.contiguous();
    const int64_t M = x.size(0), K = x.size(1), N = weight.size(0);
    const bool has_bias = bias.numel() > 0;
    // A fresh output, the bias copied into it: bias.expand({1, N}).contiguous() would be the bias
    // itself (a size-1 dimension's stride does not count), and sgemm would add into the parameter.
    auto y = at::empty({M, N}, x.options());
    if (has_bias) y.copy_(bias.expand({M, N}));
    sgemm('N', 'T', M, N, K, x.data_ptr<float>(), K, weight.data_ptr<float>(), K, has_bias ? 1.0f : 0.0f,
          y.data_ptr<float>(), N);
    ctx->save_for_backward({x, weight});
    ctx->saved_data["has_bias"] = has_bias;
    return {y};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &x = saved[0], &weight = saved[1];
    const int64_t M = x.size(0), K = x.size(1), N = weight.size(0);
    const auto dy = grads[0].to(at::kFloat).contiguous();
    at::Tensor dx, dw, db;
    if (ctx->needs_input_grad(0)) {
      dx = at::empty({M, K}, x.options());
      sgemm('N', 'N', M, K, N, dy.data_ptr<float>(), N, weight.data_ptr<float>(), K, 0.0f, dx.data_ptr<float>(), K);
    }
    if (ctx->needs_input_grad(1)) {
      dw = at::empty({N, K}, x.options());
      sgemm('T', 'N', N, K, M, dy.data_ptr<float>(), N, x.data_ptr<float>(), K, 0.0f, dw.data_ptr<float>(), K);
    }
    if (ctx->saved_data["has_bias"].toBool() && ctx->needs_input_grad(2)) db = dy.sum(0);
    return {dx, dw, db};
  }
};

// Whether this product goes to oneDNN: float32 CPU operands, no autocast (which would cast them),
// and no empty dimension (sgemm's degenerate cases are at::linear's).
bool onednn_takes(const at::Tensor& x2d, const at::Tensor& weight, const at::Tensor& bias) {
  if (g_products.load() != F32Products::kOneDnn) return false;
  if (!x2d.device().is_cpu() || x2d.scalar_type() != at::kFloat || !weight.device().is_cpu() ||
      weight.scalar_type() != at::kFloat || weight.dim() != 2)
    return false;
  if (bias.defined() && (bias.scalar_type() != at::kFloat || bias.dim() != 1 || !bias.device().is_cpu())) return false;
  if (autocast_dtype(x2d.device())) return false;
  return x2d.size(0) > 0 && x2d.size(1) > 0 && weight.size(0) > 0;
}
#endif

}  // namespace

bool onednn_sgemm_built() { return TISA_HAVE_ONEDNN_SGEMM != 0; }

F32Products f32_products() { return g_products.load(); }

void set_f32_products(F32Products products) {
  if (products == F32Products::kOneDnn && !onednn_sgemm_built())
    throw Error("float32 products through oneDNN: this build has no oneDNN sgemm (it is built where LibTorch links "
                "the system's oneDNN, as Debian's does, with libdnnl-dev installed); use blas or auto");
  g_products.store(resolved(products));
}

std::string f32_products_name(F32Products products) {
  switch (products) {
    case F32Products::kBlas: return "blas";
    case F32Products::kOneDnn: return "onednn";
    case F32Products::kAuto: break;
  }
  return "auto";
}

F32Products f32_products_from_name(const std::string& name) {
  if (name == "auto") return F32Products::kAuto;
  if (name == "blas") return F32Products::kBlas;
  if (name == "onednn") return F32Products::kOneDnn;
  throw Error("float32 products: auto, blas or onednn, got '" + name + "'");
}

std::string f32_products_description() {
  if (f32_products() == F32Products::kOneDnn) return "oneDNN sgemm";
  if (!onednn_sgemm_built()) return "BLAS (this build has no oneDNN sgemm)";
  if (!cpu_runs_avx512()) return "BLAS (no AVX-512 on this CPU)";
  return "BLAS (as asked)";
}

at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  const bool rows = x.dim() == 2;
  const auto x2d = rows ? x : x.reshape({-1, x.size(-1)});
#if TISA_HAVE_ONEDNN_SGEMM
  if (onednn_takes(x2d, weight, bias)) {
    auto y = OneDnnLinearFunction::apply(x2d, weight, bias.defined() ? bias : at::empty({0}, x.options()))[0];
    if (rows) return y;
    auto sizes = x.sizes().vec();
    sizes.back() = weight.size(0);
    return y.view(sizes);
  }
#endif
  // at::linear's 2-D form is addmm, which starts the product from the bias in the output's dtype;
  // LibTorch 1.13 runs a 3-D input under bf16 autocast as matmul + add_ of the float32 bias, a
  // round trip of the whole output through float32 (docs/perf/README.md, "Linear layers as 2-D
  // products").
  auto y = at::linear(x2d, weight, bias);
  if (rows) return y;
  auto sizes = x.sizes().vec();
  sizes.back() = y.size(1);
  return y.view(sizes);
}

}  // namespace tisa::model
