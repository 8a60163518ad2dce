// Fixed sinusoidal absolute positions (Vaswani et al. 2017, §3.5), added to word + token-type
// embeddings before the embedding LayerNorm, like the learned table (they combine: absolute: true
// adds both):
//   PE[p, 2i] = sin(p / base^(2i/E)),   PE[p, 2i+1] = cos(p / base^(2i/E)),   base = 10000.
// No parameters and no attention term; the table is evaluated in float64, cast to the embeddings'
// dtype and cached per (L, dtype, device). Any length works (no max_position_embeddings limit).
#pragma once
#include "config/config.h"
#include "model/position/relative_scheme.h"

namespace tisa::model {

// PE [length, size] in float64 on the CPU.
torch::Tensor sinusoidal_table(int64_t length, int64_t size);

struct SinusoidalImpl : RelativeSchemeImpl {
  explicit SinusoidalImpl(int64_t embedding_size);
  torch::Tensor add_to_embeddings(torch::Tensor x) override;
  std::string describe() const override { return "fixed, E=" + std::to_string(embedding_size_); }
  double flops(int64_t batch, int64_t length) const override;

 private:
  int64_t embedding_size_;
  torch::Tensor cached_;  // [L, E]
};
TORCH_MODULE(Sinusoidal);

std::shared_ptr<RelativeSchemeImpl> make_sinusoidal_scheme(const config::ModelConfig& c);

}  // namespace tisa::model
