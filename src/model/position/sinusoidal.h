// Fixed sinusoidal absolute positions (Vaswani et al. 2017, §3.5), added to word + token-type
// embeddings before the embedding LayerNorm, like the learned table (they combine: absolute: true
// adds both):
//   PE[p, 2i] = sin(p / base^(2i/E)),   PE[p, 2i+1] = cos(p / base^(2i/E)),   base = 10000.
// No parameters and no attention term; the table is evaluated in float64, cast to the embeddings'
// dtype and cached per (L, dtype, device). Any length works (no max_position_embeddings limit).
//
// Scale (model.position.sinusoidal.scale). The unit-amplitude table has mean square 1/2 per
// component, while ALBERT initialises word and token-type embeddings with std initializer_range
// (0.02): added as is, positions are ~99.8 % of the LayerNorm input's power at initialisation and
// the model must first grow its word embeddings ~35x to see which word it reads (issue 37).
//   init    (default) the table times initializer_range·√2, so that its mean square is
//           initializer_range² — exactly that of ALBERT's learned table at initialisation
//           (BERT/ALBERT: N(0, initializer_range²)); positions then hold the same share of the
//           embedding power as with learned positions (1/3 with token types).
//   sqrt_e  Vaswani et al. §3.4: the embeddings (word + token type) times √E, the table at unit
//           amplitude. It balances the two only for embeddings initialised at std E^-1/2 (their
//           setting); with initializer_range 0.02 and E 128, positions still hold ~83 %.
//   unit    the unit-amplitude table added to unscaled embeddings (tisa-train before 2026-12-02;
//           a model directory written then has no tisa_train.position.sinusoidal section and
//           loads with today's default: add `"sinusoidal": {"scale": "unit"}` to load it as trained).
#pragma once
#include "config/config.h"
#include "model/position/relative_scheme.h"

namespace tisa::model {

// Settings of the sinusoidal scheme: model.position.sinusoidal.
struct SinusoidalSettings {
  static constexpr const char* kName = "sinusoidal";
  std::string scale = "init";  // init | sqrt_e | unit (see above)
  void visit(config::FieldVisitor& v) {
    v.field("scale", scale,
            "init: table at the embeddings' initial scale (initializer_range); sqrt_e: embeddings x sqrt(E) "
            "(Vaswani et al.); unit: unit-amplitude table, unscaled embeddings");
  }
  void validate(const config::ModelConfig& model, bool selected, config::SettingsProblems& p) const;
};

// PE [length, size] in float64 on the CPU, unit amplitude.
torch::Tensor sinusoidal_table(int64_t length, int64_t size);

struct SinusoidalImpl : RelativeSchemeImpl {
  // x ↦ x · embedding_factor + table_factor · PE.
  SinusoidalImpl(int64_t embedding_size, double table_factor, double embedding_factor);
  torch::Tensor add_to_embeddings(torch::Tensor x) override;
  std::string describe() const override;
  double flops(int64_t batch, int64_t length) const override;

 private:
  int64_t embedding_size_;
  double table_factor_, embedding_factor_;
  torch::Tensor cached_;  // [L, E], times table_factor_
};
TORCH_MODULE(Sinusoidal);

std::shared_ptr<RelativeSchemeImpl> make_sinusoidal_scheme(const config::ModelConfig& c);

}  // namespace tisa::model
