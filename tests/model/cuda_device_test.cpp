// CUDA test cases (skipped, visibly, where LibTorch sees no GPU): every position scheme's forward
// and backward on the GPU equals the CPU within float32 tolerance, through the attention path the
// GPU takes (fused where allowed) and the eager one; bf16 autocast on CUDA stays close to fp32.
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include "close.h"
#include "model/autocast.h"
#include "scheme_variants.h"

namespace {

using tisa::model::AttentionBackend;
using tisa::test::close;

class CudaSchemes : public ::testing::TestWithParam<tisa::test::SchemeVariant> {
 protected:
  void SetUp() override {
    if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible to LibTorch: CUDA case skipped";
  }
};

TEST_P(CudaSchemes, ForwardBackwardMatchesCpu) {
  const auto& v = GetParam();
  const torch::Device gpu(torch::kCUDA, 0);
  for (auto backend : {AttentionBackend::kAuto, AttentionBackend::kEager}) {
    torch::manual_seed(11);
    tisa::model::AlbertForPreTraining cpu_model(tisa::test::tiny_model(v));
    torch::manual_seed(11);
    tisa::model::AlbertForPreTraining gpu_model(tisa::test::tiny_model(v));
    gpu_model->to(gpu);
    const auto ref = tisa::test::forward_backward(cpu_model, AttentionBackend::kEager, torch::kCPU);
    const auto got = tisa::test::forward_backward(gpu_model, backend, gpu);
    const std::string what = v.name + (backend == AttentionBackend::kAuto ? " (auto)" : " (eager)");
    EXPECT_TRUE(close(got.hidden, ref.hidden, 1e-4, 1e-4, what + " hidden"));
    EXPECT_TRUE(close(got.sop, ref.sop, 1e-4, 1e-4, what + " sop"));
    ASSERT_EQ(got.grads.size(), ref.grads.size()) << what;
    for (const auto& [name, g] : ref.grads) EXPECT_TRUE(close(got.grads.at(name), g, 1e-4, 1e-3, what + " grad " + name));
  }
}

TEST_P(CudaSchemes, Bf16AutocastStaysCloseToFp32) {
  const auto& v = GetParam();
  const torch::Device gpu(torch::kCUDA, 0);
  torch::manual_seed(11);
  tisa::model::AlbertModel model(tisa::test::tiny_model(v));
  model->to(gpu);
  model->eval();
  torch::NoGradGuard no_grad;
  auto ids = torch::randint(5, 50, {2, 9}, torch::kLong).to(gpu);
  auto fp32 = model->forward(ids, {}, {}).last_hidden_state;
  torch::Tensor bf16;
  {
    tisa::model::AutocastScope autocast(gpu, true);
    bf16 = model->forward(ids, {}, {}).last_hidden_state;
  }
  EXPECT_TRUE(torch::isfinite(bf16).all().item<bool>()) << v.name;
  EXPECT_TRUE(close(bf16.to(torch::kFloat), fp32, 0.1, 0.05, v.name + " bf16 vs fp32"));
}

INSTANTIATE_TEST_SUITE_P(Schemes, CudaSchemes, ::testing::ValuesIn(tisa::test::scheme_variants()),
                         [](const auto& info) { return tisa::test::variant_test_name(info.param); });

}  // namespace
