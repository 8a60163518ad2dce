// An estimate of the memory a training run needs, made from the config before anything is
// allocated, so that sizes that cannot fit (model.hidden_size 10^9, training.batch_size 10^5) are
// one clear error naming the keys instead of an allocator abort deep inside LibTorch.
//
// The estimate is deliberately a lower bound: parameters with their gradients and two optimiser
// moments (16 bytes each), plus the activations the backward pass keeps per layer application
// (at least 6 [B, L, H] and 2 [B, L, I] tensors and 2 [B, heads, L, L] attention tensors, 2 bytes
// a value) and the MLM logits. A run refused by it could not have run; one accepted may still be
// tight.
#pragma once
#include <cstdint>
#include <string>

#include "config/config.h"

namespace tisa::train {

struct MemoryEstimate {
  double parameters = 0;         // count
  double parameter_bytes = 0;    // weights, gradients, optimiser state
  double activation_bytes = 0;   // kept for the backward pass of one micro-batch
  double total_bytes() const { return parameter_bytes + activation_bytes; }
};

// `predictions_per_example`: MLM positions per example (pretraining), 0 for classification.
MemoryEstimate estimate_training_memory(const config::ModelConfig& model, int64_t batch_size, int64_t seq_length,
                                        int64_t predictions_per_example);

// Physical memory of this machine in bytes (0 when unknown).
double physical_memory_bytes();

// Throws tisa::Error when `estimate` exceeds `available_bytes` (> 0), naming the sizes and the
// keys that set them (`batch_key`, `length_key`).
void require_memory_fits(const MemoryEstimate& estimate, double available_bytes, const std::string& batch_key,
                         int64_t batch_size, const std::string& length_key, int64_t seq_length);

}  // namespace tisa::train
