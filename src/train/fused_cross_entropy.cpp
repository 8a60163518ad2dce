// Autograd wrapper of the bf16 cross-entropy kernels; see fused_cross_entropy.h.
#include "train/fused_cross_entropy.h"

#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <algorithm>

#include "common/error.h"
#include "train/cross_entropy_kernels.h"

namespace tisa::train {
namespace {

constexpr int64_t kRowGrain = 8;  // rows per parallel task: a row of V = 4k is a few µs

const uint16_t* bf16_data(const torch::Tensor& t) {
  return reinterpret_cast<const uint16_t*>(t.data_ptr<at::BFloat16>());
}

class CrossEntropyFunction : public torch::autograd::Function<CrossEntropyFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& logits_in,
                                                const torch::Tensor& labels_in) {
    const torch::Tensor logits = logits_in.contiguous();
    const torch::Tensor labels = labels_in.contiguous();
    const int64_t rows = logits.size(0), cols = logits.size(1);
    auto f32 = torch::TensorOptions().dtype(torch::kFloat);
    torch::Tensor lse = torch::empty({rows}, f32), loss = torch::empty({rows}, f32);
    torch::Tensor argmax = torch::empty({rows}, torch::TensorOptions().dtype(torch::kLong));
    const uint16_t* x = bf16_data(logits);
    const int64_t* y = labels.data_ptr<int64_t>();
    float* lse_p = lse.data_ptr<float>();
    float* loss_p = loss.data_ptr<float>();
    int64_t* arg_p = argmax.data_ptr<int64_t>();
    at::parallel_for(0, rows, kRowGrain, [&](int64_t begin, int64_t end) {
      kernels::cross_entropy_forward(x, y, begin, end, cols, lse_p, loss_p, arg_p);
    });
    // Row losses added in row order (double), so the sum does not depend on the thread count.
    double total = 0;
    int64_t hits = 0;
    for (int64_t r = 0; r < rows; ++r) {
      total += loss_p[r];
      hits += arg_p[r] == y[r];
    }
    ctx->save_for_backward({logits, labels, lse});
    torch::Tensor hit_count = torch::full({}, hits, torch::TensorOptions().dtype(torch::kLong));
    ctx->mark_non_differentiable({hit_count});
    return {torch::full({}, static_cast<float>(total), f32), hit_count};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& logits = saved[0];
    const torch::Tensor& labels = saved[1];
    const torch::Tensor& lse = saved[2];
    const int64_t rows = logits.size(0), cols = logits.size(1);
    const float scale = grad_outputs[0].defined() ? grad_outputs[0].to(torch::kFloat).item<float>() : 0.0f;
    torch::Tensor grad = torch::empty_like(logits);
    const uint16_t* x = bf16_data(logits);
    const int64_t* y = labels.data_ptr<int64_t>();
    const float* lse_p = lse.data_ptr<float>();
    auto* g = reinterpret_cast<uint16_t*>(grad.data_ptr<at::BFloat16>());
    at::parallel_for(0, rows, kRowGrain, [&](int64_t begin, int64_t end) {
      kernels::cross_entropy_backward(x, y, lse_p, scale, begin, end, cols, g);
    });
    return {grad, torch::Tensor()};
  }
};

}  // namespace

bool fused_cross_entropy_applies(const torch::Tensor& logits) {
  return logits.defined() && logits.device().is_cpu() && logits.scalar_type() == torch::kBFloat16 &&
         logits.dim() == 2;
}

CrossEntropySum fused_cross_entropy_sum(const torch::Tensor& logits, const torch::Tensor& labels) {
  TISA_CHECK(fused_cross_entropy_applies(logits), "fused_cross_entropy_sum: logits must be 2-D bf16 on the CPU");
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
