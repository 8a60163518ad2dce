// Absolute (learned) position embeddings, the embedding-side scheme (SPEC §2): a table Pos[P, E]
// whose first L rows are added to word + token-type embeddings before the embedding LayerNorm.
// Registered by AlbertEmbeddings as `position_embeddings` so the parameter keeps its HF name
// `albert.embeddings.position_embeddings.weight`.
#pragma once
#include <torch/nn/module.h>

namespace tisa::model {

struct AbsolutePositionsImpl : torch::nn::Module {
  AbsolutePositionsImpl(int64_t max_positions, int64_t embedding_size, double init_std);
  // Rows 0 … length−1: [length, E] (broadcasts over the batch).
  torch::Tensor forward(int64_t length);
  // Rows offsets[b] … offsets[b]+length−1 for each sequence b: [B, length, E] (offsets [B] int64).
  torch::Tensor shifted(const torch::Tensor& offsets, int64_t length);
  torch::Tensor weight;  // [P, E]
};
TORCH_MODULE(AbsolutePositions);

}  // namespace tisa::model
