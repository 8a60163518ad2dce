// Fixed sinusoidal absolute positions; see sinusoidal.h.
#include "model/position/sinusoidal.h"

#include <torch/torch.h>

namespace tisa::model {

torch::Tensor sinusoidal_table(int64_t length, int64_t size) {
  auto f64 = torch::TensorOptions().dtype(torch::kDouble);
  auto pos = torch::arange(length, f64).unsqueeze(1);                           // [L, 1]
  auto i2 = torch::arange(0, size, 2, f64);                                     // [⌈E/2⌉]: 2i
  auto angles = pos * torch::pow(10000.0, -i2 / static_cast<double>(size));    // [L, ⌈E/2⌉]
  auto pe = torch::zeros({length, size}, f64);
  pe.slice(1, 0, size, 2).copy_(angles.sin());
  pe.slice(1, 1, size, 2).copy_(angles.cos().narrow(1, 0, size / 2));
  return pe;                                                                    // [L, E]
}

std::shared_ptr<RelativeSchemeImpl> make_sinusoidal_scheme(const config::ModelConfig& c) {
  return std::make_shared<SinusoidalImpl>(c.embedding_size);
}

SinusoidalImpl::SinusoidalImpl(int64_t embedding_size) : embedding_size_(embedding_size) {}

torch::Tensor SinusoidalImpl::add_to_embeddings(torch::Tensor x) {
  const int64_t L = x.size(1);
  if (!cached_.defined() || cached_.size(0) != L || cached_.scalar_type() != x.scalar_type() ||
      cached_.device() != x.device())
    cached_ = sinusoidal_table(L, embedding_size_).to(x.options());
  return x + cached_;                                                           // [B, L, E]
}

double SinusoidalImpl::flops(int64_t batch, int64_t length) const {
  (void)batch;
  (void)length;
  return 0.0;  // once per model, not per layer: the embedding add is negligible
}

}  // namespace tisa::model
