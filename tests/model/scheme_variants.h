// The position-scheme variants that model tests run over, a tiny ALBERT config for each, and one
// forward + backward whose outputs and gradients tests compare across backends and devices.
#pragma once
#include <torch/torch.h>

#include <cctype>
#include <map>
#include <string>

#include "config/config.h"
#include "model/albert.h"
#include "model/position/fire.h"
#include "model/position/shaw.h"
#include "model/position/t5.h"
#include "model/position/tisa.h"

namespace tisa::test {

struct SchemeVariant {
  std::string name;
  bool absolute;
  std::string relative;
  bool shaw_values;
  bool fused_expected;  // takes the fused attention path on a LibTorch with SDPA
};

inline const SchemeVariant kSchemeVariants[] = {
    {"absolute", true, "none", false, true},
    {"none", false, "none", false, true},
    {"tisa", false, "tisa", false, true},
    {"absolute+tisa", true, "tisa", false, true},
    {"shaw_key_only", false, "shaw", false, true},
    {"shaw_key_value", false, "shaw", true, false},
    {"rope", false, "rope", false, true},
    {"absolute+rope", true, "rope", false, true},
    {"alibi", false, "alibi", false, true},
    {"t5", false, "t5", false, true},
    {"kerple_log", false, "kerple_log", false, true},
    {"fire", false, "fire", false, true},
    {"sinusoidal", false, "sinusoidal", false, true},
};

// Settings of the schemes for tiny models and inputs of about a dozen tokens: Shaw's clip and T5's
// buckets shorter than the inputs, few TISA kernels, a small FIRE MLP.
inline void set_small_scheme_settings(config::ModelConfig& c) {
  c.position.settings<tisa::model::ShawSettings>().max_distance = 3;
  c.position.settings<tisa::model::TisaSettings>().kernels = 2;
  c.position.settings<tisa::model::T5Settings>().num_buckets = 8;
  c.position.settings<tisa::model::T5Settings>().max_distance = 16;
  c.position.settings<tisa::model::FireSettings>().hidden_size = 8;
  c.position.settings<tisa::model::FireSettings>().init_threshold = 6;  // below the test length 11: FIRE's per-query normaliser path
}

inline config::ModelConfig tiny_model(const SchemeVariant& v) {
  config::ModelConfig c;
  c.vocab_size = 50;
  c.embedding_size = 8;
  c.hidden_size = 16;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.intermediate_size = 32;
  c.max_position_embeddings = 32;
  c.position.absolute = v.absolute;
  c.position.relative = v.relative;
  set_small_scheme_settings(c);
  c.position.settings<tisa::model::ShawSettings>().values = v.shaw_values;
  return c;
}

// A gtest parameter name from a variant name ("absolute+tisa" -> "absolute_tisa").
inline std::string variant_test_name(const SchemeVariant& v) {
  std::string n = v.name;
  for (auto& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

struct ForwardBackwardResult {
  torch::Tensor hidden, sop;                    // on the CPU
  std::map<std::string, torch::Tensor> grads;   // every parameter's gradient, on the CPU
};

// Forward of `model` (already on `device`) on a fixed batch with padding (one row mostly padding),
// a loss that reaches every output with different weights, backward.
inline ForwardBackwardResult forward_backward(model::AlbertForPreTraining& model, model::AttentionBackend backend,
                                              const torch::Device& device) {
  model::set_attention_backend(*model, backend);
  model->zero_grad();
  torch::manual_seed(3);
  auto ids = torch::randint(5, 50, {3, 11}, torch::kLong);
  auto mask = torch::ones({3, 11}, torch::kLong);
  mask[1].narrow(0, 7, 4).fill_(0);
  mask[2].narrow(0, 2, 9).fill_(0);
  auto out = model->forward(ids.to(device), torch::Tensor(), mask.to(device));
  auto hidden = out.encoder.last_hidden_state;
  auto w = torch::linspace(-1, 1, hidden.numel()).view(hidden.sizes()).to(device);
  ((hidden * w).sum() + out.sop_logits.pow(2).sum() + out.prediction_logits.mean()).backward();
  ForwardBackwardResult r{hidden.detach().cpu().clone(), out.sop_logits.detach().cpu().clone(), {}};
  for (const auto& p : model->named_parameters())
    if (p.value().grad().defined()) r.grads[p.key()] = p.value().grad().cpu().clone();
  return r;
}

}  // namespace tisa::test
