// The position-scheme variants that model tests run over, a tiny ALBERT config for each, and one
// forward + backward whose outputs and gradients tests compare across backends and devices.
#pragma once
#include <torch/torch.h>

#include <cctype>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "config/config.h"
#include "model/albert.h"
#include "model/position/registry.h"

namespace tisa::test {

// A model's position terms as tests run them: the learned table and/or one scheme of the
// registry, with a named preset of the scheme's settings applied after "tiny".
struct SchemeVariant {
  std::string name;    // "absolute", "<scheme>", "absolute+<scheme>", "<scheme>-<preset>"
  bool absolute;
  std::string relative;
  std::string preset;  // empty: the scheme's tiny settings only
};

// gtest prints a struct parameter as raw bytes; the variant's name instead.
inline void PrintTo(const SchemeVariant& v, std::ostream* os) { *os << v.name; }

// Every variant, generated from the registry: absolute alone, then per scheme (table order) the
// scheme alone, with the absolute table, and alone with each preset it names besides "tiny" (shaw-hf:
// keys only, HF's relative_key). A new scheme is in every suite that runs over these.
inline std::vector<SchemeVariant> scheme_variants() {
  std::vector<SchemeVariant> out{{"absolute", true, "none", ""}};
  config::ModelConfig defaults;
  for (const auto& name : model::relative_scheme_names()) {
    out.push_back({name, false, name, ""});
    if (name == "none") continue;
    out.push_back({"absolute+" + name, true, name, ""});
    if (const auto* settings = defaults.position.find_settings(name))
      for (const auto& preset : settings->presets())
        if (preset != "tiny") out.push_back({name + "-" + preset, false, name, preset});
  }
  return out;
}

// Settings of every scheme for tiny models and inputs of about a dozen tokens: each scheme's own
// "tiny" preset (Shaw's clip and T5's buckets shorter than the inputs, few TISA kernels, a small
// FIRE MLP).
inline void set_small_scheme_settings(config::ModelConfig& c) {
  for (const auto& name : config::position_scheme_names())
    if (auto* settings = c.position.find_settings(name)) settings->apply_preset("tiny", c);
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
  if (!v.preset.empty()) c.position.find_settings(v.relative)->apply_preset(v.preset, c);
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
