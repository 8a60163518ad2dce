// Step-time benchmark of the optimisers on ALBERT-base-shaped parameters (11.7M values in 25
// tensors) and on the cpu recipe's (1.1M in 48). Disabled by default (it measures, it does not
// check); run with
//   build/tests/test_optim --gtest_also_run_disabled_tests --gtest_filter='*Bench*'
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>

#include "optim/adamw.h"
#include "optim/lamb.h"

namespace {

using Shapes = std::vector<std::pair<std::string, std::vector<int64_t>>>;

Shapes albert_base_shapes() {
  return {
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
}

// The cpu recipe's model (configs/paper/cpu: E = H = 128, 2 unshared layers, I 512, V 4000):
// 1.1M values in 48 tensors, where per-op overhead weighs more than memory traffic.
Shapes cpu_recipe_shapes() {
  Shapes s = {{"albert.embeddings.word_embeddings.weight", {4000, 128}},
              {"albert.embeddings.position_embeddings.weight", {512, 128}},
              {"albert.embeddings.token_type_embeddings.weight", {2, 128}},
              {"albert.embeddings.LayerNorm.weight", {128}},
              {"albert.embeddings.LayerNorm.bias", {128}},
              {"albert.encoder.embedding_hidden_mapping_in.weight", {128, 128}},
              {"albert.encoder.embedding_hidden_mapping_in.bias", {128}},
              {"albert.pooler.weight", {128, 128}},
              {"albert.pooler.bias", {128}},
              {"predictions.dense.weight", {128, 128}},
              {"predictions.dense.bias", {128}},
              {"predictions.LayerNorm.weight", {128}},
              {"predictions.LayerNorm.bias", {128}},
              {"predictions.bias", {4000}},
              {"sop_classifier.classifier.weight", {2, 128}},
              {"sop_classifier.classifier.bias", {2}}};
  for (const char* layer : {"group0.", "group1."}) {
    for (const auto& [name, shape] : Shapes{{"query.weight", {128, 128}}, {"query.bias", {128}},
                                            {"key.weight", {128, 128}},   {"key.bias", {128}},
                                            {"value.weight", {128, 128}}, {"value.bias", {128}},
                                            {"dense.weight", {128, 128}}, {"dense.bias", {128}},
                                            {"attention.LayerNorm.weight", {128}},
                                            {"attention.LayerNorm.bias", {128}},
                                            {"ffn.weight", {512, 128}}, {"ffn.bias", {512}},
                                            {"ffn_output.weight", {128, 512}}, {"ffn_output.bias", {128}},
                                            {"full_layer_layer_norm.weight", {128}},
                                            {"full_layer_layer_norm.bias", {128}}})
      s.emplace_back(std::string("albert.encoder.") + layer + name, shape);
  }
  return s;
}

tisa::optim::NamedParams make_params(const Shapes& shapes) {
  tisa::optim::NamedParams params;
  for (const auto& [name, shape] : shapes) {
    at::Tensor p = torch::randn(shape).mul_(0.02).requires_grad_(true);
    p.mutable_grad() = torch::randn(shape).mul_(1e-3);
    params.emplace_back(name, p);
  }
  return params;
}

template <class Opt, class Options>
void bench(const std::string& label, const Shapes& shapes, Options options) {
  Opt opt(make_params(shapes), options);
  int64_t numel = 0;
  for (const auto& [name, p] : opt.params()) numel += p.numel();
  opt.step(1e-3);  // warm-up
  const int reps = numel > 2'000'000 ? 10 : 200;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) {
    opt.clip_grad_norm(1.0);
    opt.step(1e-3);
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[bench] %s: %.3f ms per clip+step, %lld params, %d threads\n", label.c_str(), ms / reps,
              static_cast<long long>(numel), at::get_num_threads());
}

// Fused and reference paths alternated, three rounds, so that a drift of the machine shows.
TEST(OptimBench, DISABLED_AlbertBaseStep) {
  for (const auto& [model, shapes] : {std::pair{"albert-base", albert_base_shapes()},
                                      std::pair{"cpu recipe", cpu_recipe_shapes()}}) {
    for (int round = 0; round < 3; ++round) {
      for (bool fused : {true, false}) {
        const std::string tag = std::string(model) + (fused ? ", fused" : ", reference");
        tisa::optim::LambOptions albert;
        albert.fused = fused;
        bench<tisa::optim::Lamb>("lamb (albert) " + tag, shapes, albert);
        tisa::optim::LambOptions nv;
        nv.bias_correction = nv.trust_ratio_all = true;
        nv.fused = fused;
        bench<tisa::optim::Lamb>("lamb (nvlamb) " + tag, shapes, nv);
        tisa::optim::AdamWOptions adam;
        adam.fused = fused;
        bench<tisa::optim::AdamW>("adamw " + tag, shapes, adam);
      }
    }
  }
}

}  // namespace
