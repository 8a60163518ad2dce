// Matrix-product rate of this machine with the LibTorch in use (f32 and bf16); see bench.h.
#include <array>
#include <chrono>

#include "bench/bench.h"
#include "common/error.h"
#include "model/cpu_linear.h"

namespace tisa::bench {

nlohmann::json GemmResult::to_json() const {
  return {{"m", spec.m}, {"n", spec.n}, {"k", spec.k}, {"dtype", spec.dtype}, {"threads", threads},
          {"seconds", seconds.to_json()}, {"gflops", gflops_median}};
}

std::vector<GemmSpec> default_gemm_specs(int64_t tokens, int64_t hidden, int64_t intermediate) {
  std::vector<GemmSpec> out;
  std::vector<const char*> dtypes{"f32", "bf16"};
  if (model::onednn_sgemm_built()) dtypes.insert(dtypes.begin() + 1, "f32-onednn");
  for (const char* dtype : dtypes) {
    for (auto [m, k, n] : {std::array<int64_t, 3>{1024, 1024, 1024}, {tokens, hidden, hidden},
                           {tokens, hidden, intermediate}, {tokens, intermediate, hidden}}) {
      GemmSpec s;
      s.m = m;
      s.k = k;
      s.n = n;
      s.dtype = dtype;
      out.push_back(s);
    }
  }
  return out;
}

GemmResult run_gemm(const GemmSpec& spec) {
  if (spec.dtype != "f32" && spec.dtype != "bf16" && spec.dtype != "f32-onednn")
    throw Error("bench --gemm: dtype must be f32, f32-onednn or bf16");
  if (spec.m < 1 || spec.n < 1 || spec.k < 1 || spec.reps < 1) throw Error("bench --gemm: sizes and reps must be >= 1");
  GemmResult r;
  r.spec = spec;
  r.threads = at::get_num_threads();
  const auto dtype = spec.dtype == "bf16" ? torch::kBFloat16 : torch::kFloat;
  torch::manual_seed(0);
  auto a = torch::randn({spec.m, spec.k}).to(dtype);
  auto b = torch::randn({spec.k, spec.n}).to(dtype);
  auto c = torch::empty({spec.m, spec.n}, torch::TensorOptions().dtype(dtype));
  // f32-onednn: the product as the float32 linear layers run it there, a·wᵀ with w = bᵀ [n, k].
  const bool onednn = spec.dtype == "f32-onednn";
  const auto w = onednn ? b.t().contiguous() : torch::Tensor();
  struct Restore {
    model::F32Products previous = model::f32_products();
    ~Restore() { model::set_f32_products(previous); }
  } restore;
  if (onednn) model::set_f32_products(model::F32Products::kOneDnn);
  torch::NoGradGuard no_grad;
  auto product = [&] {
    if (onednn) c = model::linear(a, w, torch::Tensor());
    else torch::mm_out(c, a, b);
  };
  for (int i = 0; i < spec.warmup; ++i) product();
  std::vector<double> times;
  for (int i = 0; i < spec.reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    product();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  r.seconds = Spread::of(times);
  r.gflops_median = 2.0 * spec.m * spec.n * spec.k / r.seconds.median / 1e9;
  return r;
}

}  // namespace tisa::bench
