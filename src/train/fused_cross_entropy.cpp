// Autograd wrapper of the bf16 and float32 cross-entropy kernels; see fused_cross_entropy.h.
#include "train/fused_cross_entropy.h"

#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <algorithm>

#include "common/error.h"
#include "train/cross_entropy_kernels.h"

namespace tisa::train {
namespace {

static_assert(sizeof(kernels::RowNorm) == 2 * sizeof(float), "RowNorm is stored as a [rows, 2] float tensor");

constexpr int64_t kRowGrain = 8;  // rows per parallel task: a row of V = 4k is a few µs

// The logits' storage as the kernels take it: bf16 as raw 16-bit words, float32 as is.
template <typename T>
T* storage(const torch::Tensor& t);
template <>
uint16_t* storage<uint16_t>(const torch::Tensor& t) {
  return reinterpret_cast<uint16_t*>(t.data_ptr<at::BFloat16>());
}
template <>
float* storage<float>(const torch::Tensor& t) {
  return t.data_ptr<float>();
}

class CrossEntropyFunction : public torch::autograd::Function<CrossEntropyFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& logits_in,
                                                const torch::Tensor& labels_in) {
    const torch::Tensor logits = logits_in.contiguous();
    const torch::Tensor labels = labels_in.contiguous();
    const int64_t rows = logits.size(0), cols = logits.size(1);
    auto f32 = torch::TensorOptions().dtype(torch::kFloat);
    // Per row its maximum and log Σ exp(x − max) (kernels::RowNorm), kept for the backward.
    torch::Tensor norm = torch::empty({rows, 2}, f32), loss = torch::empty({rows}, f32);
    torch::Tensor argmax = torch::empty({rows}, torch::TensorOptions().dtype(torch::kLong));
    const int64_t* y = labels.data_ptr<int64_t>();
    auto* norm_p = reinterpret_cast<kernels::RowNorm*>(norm.data_ptr<float>());
    float* loss_p = loss.data_ptr<float>();
    int64_t* arg_p = argmax.data_ptr<int64_t>();
    auto run = [&](const auto* x) {
      at::parallel_for(0, rows, kRowGrain, [&](int64_t begin, int64_t end) {
        kernels::cross_entropy_forward(x, y, begin, end, cols, norm_p, loss_p, arg_p);
      });
    };
    if (logits.scalar_type() == torch::kBFloat16) run(storage<uint16_t>(logits));
    else run(storage<float>(logits));
    // Row losses added in row order (double), so the sum does not depend on the thread count.
    double total = 0;
    int64_t hits = 0;
    for (int64_t r = 0; r < rows; ++r) {
      total += loss_p[r];
      hits += arg_p[r] == y[r];
    }
    ctx->save_for_backward({logits, labels, norm});
    torch::Tensor hit_count = torch::full({}, hits, torch::TensorOptions().dtype(torch::kLong));
    ctx->mark_non_differentiable({hit_count});
    return {torch::full({}, static_cast<float>(total), f32), hit_count};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& logits = saved[0];
    const torch::Tensor& labels = saved[1];
    const torch::Tensor& norm = saved[2];
    const int64_t rows = logits.size(0), cols = logits.size(1);
    const float scale = grad_outputs[0].defined() ? grad_outputs[0].to(torch::kFloat).item<float>() : 0.0f;
    torch::Tensor grad = torch::empty_like(logits);
    const int64_t* y = labels.data_ptr<int64_t>();
    const auto* norm_p = reinterpret_cast<const kernels::RowNorm*>(norm.data_ptr<float>());
    auto run = [&](const auto* x, auto* g) {
      at::parallel_for(0, rows, kRowGrain, [&](int64_t begin, int64_t end) {
        kernels::cross_entropy_backward(x, y, norm_p, scale, begin, end, cols, g);
      });
    };
    if (logits.scalar_type() == torch::kBFloat16) run(storage<uint16_t>(logits), storage<uint16_t>(grad));
    else run(storage<float>(logits), storage<float>(grad));
    return {grad, torch::Tensor()};
  }
};

}  // namespace

bool fused_cross_entropy_applies(const torch::Tensor& logits) {
  return logits.defined() && logits.device().is_cpu() &&
         (logits.scalar_type() == torch::kBFloat16 || logits.scalar_type() == torch::kFloat) && logits.dim() == 2;
}

CrossEntropySum fused_cross_entropy_sum(const torch::Tensor& logits, const torch::Tensor& labels) {
  TISA_CHECK(fused_cross_entropy_applies(logits), "fused_cross_entropy_sum: logits must be 2-D bf16 or float32 on the CPU");
  TISA_CHECK(labels.dim() == 1 && labels.size(0) == logits.size(0) && labels.scalar_type() == torch::kLong &&
                 labels.device().is_cpu(),
             "fused_cross_entropy_sum: labels must be [rows] int64 on the CPU");
  if (labels.numel() > 0) {
    const auto [lo, hi] = torch::aminmax(labels);
    TISA_CHECK(lo.item<int64_t>() >= 0 && hi.item<int64_t>() < logits.size(1),
               "fused_cross_entropy_sum: a label lies outside [0, " + std::to_string(logits.size(1)) + ")");
  }
  auto out = CrossEntropyFunction::apply(logits, labels);
  return {out[0], out[1]};
}

}  // namespace tisa::train
