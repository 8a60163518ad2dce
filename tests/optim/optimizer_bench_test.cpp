// Step-time benchmark on ALBERT-base-shaped parameters (11.7M values in 25 tensors). Disabled by
// default (it measures, it does not check); run with
//   build/tests/test_optim --gtest_also_run_disabled_tests --gtest_filter='*Bench*'
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>

#include "optim/adamw.h"
#include "optim/lamb.h"

namespace {

tisa::optim::NamedParams albert_base_like() {
  const std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
      {"albert.embeddings.word_embeddings.weight", {30000, 128}},
      {"albert.embeddings.position_embeddings.weight", {512, 128}},
      {"albert.embeddings.token_type_embeddings.weight", {2, 128}},
      {"albert.embeddings.LayerNorm.weight", {128}},
      {"albert.embeddings.LayerNorm.bias", {128}},
      {"albert.encoder.embedding_hidden_mapping_in.weight", {768, 128}},
      {"albert.encoder.embedding_hidden_mapping_in.bias", {768}},
      {"layer.attention.query.weight", {768, 768}},
      {"layer.attention.query.bias", {768}},
      {"layer.attention.key.weight", {768, 768}},
      {"layer.attention.key.bias", {768}},
      {"layer.attention.value.weight", {768, 768}},
      {"layer.attention.value.bias", {768}},
      {"layer.attention.dense.weight", {768, 768}},
      {"layer.attention.dense.bias", {768}},
      {"layer.attention.LayerNorm.weight", {768}},
      {"layer.attention.LayerNorm.bias", {768}},
      {"layer.ffn.weight", {3072, 768}},
      {"layer.ffn.bias", {3072}},
      {"layer.ffn_output.weight", {768, 3072}},
      {"layer.ffn_output.bias", {768}},
      {"layer.full_layer_layer_norm.weight", {768}},
      {"layer.full_layer_layer_norm.bias", {768}},
      {"albert.pooler.weight", {768, 768}},
      {"predictions.dense.weight", {128, 768}}};
  tisa::optim::NamedParams params;
  for (const auto& [name, shape] : shapes) {
    at::Tensor p = torch::randn(shape).mul_(0.02).requires_grad_(true);
    p.mutable_grad() = torch::randn(shape).mul_(1e-3);
    params.emplace_back(name, p);
  }
  return params;
}

template <class Opt, class Options>
void bench(const char* label, Options options) {
  Opt opt(albert_base_like(), options);
  int64_t numel = 0;
  for (const auto& [name, p] : opt.params()) numel += p.numel();
  opt.step(1e-3);  // warm-up
  const int reps = 10;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) {
    opt.clip_grad_norm(1.0);
    opt.step(1e-3);
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[bench] %s: %.2f ms per clip+step, %lld params, %d threads\n", label, ms / reps,
              static_cast<long long>(numel), at::get_num_threads());
}

TEST(OptimBench, DISABLED_AlbertBaseStep) {
  bench<tisa::optim::Lamb>("lamb (albert)", tisa::optim::LambOptions{});
  tisa::optim::LambOptions nv;
  nv.bias_correction = nv.trust_ratio_all = true;
  bench<tisa::optim::Lamb>("lamb (nvlamb)", nv);
  bench<tisa::optim::AdamW>("adamw", tisa::optim::AdamWOptions{});
}

}  // namespace
