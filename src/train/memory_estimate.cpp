// Memory estimate of a training run; see memory_estimate.h.
#include "train/memory_estimate.h"

#include <unistd.h>

#include <cstdio>

#include "common/error.h"

namespace tisa::train {
namespace {

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

}  // namespace

MemoryEstimate estimate_training_memory(const config::ModelConfig& m, int64_t batch_size, int64_t seq_length,
                                        int64_t predictions_per_example) {
  // Doubles: the point is to survive absurd sizes (10^9 squared) without overflowing.
  const double V = m.vocab_size, E = m.embedding_size, H = m.hidden_size, I = m.intermediate_size;
  const double P = m.max_position_embeddings, A = m.num_attention_heads;
  const double shared_layers = static_cast<double>(m.num_hidden_groups) * m.inner_group_num;
  const double applications = static_cast<double>(m.num_hidden_layers) * m.inner_group_num;
  const double per_layer = 4 * (H * H + H) + H * I + I + I * H + H + 4 * H;  // attention, FFN, 2 LayerNorms
  MemoryEstimate e;
  e.parameters = V * E + (m.position.absolute ? P * E : 0) + 2 * E + E * H + H + shared_layers * per_layer +
                 (H * H + H) + (H * E + 3 * E + V) + (2 * H + 2);  // embeddings ... pooler, MLM, SOP heads
  e.parameter_bytes = 16 * e.parameters;                           // fp32 weight, gradient, 2 moments
  const double B = batch_size, L = seq_length;
  const double per_application = B * L * (6 * H + 2 * I) + 2 * B * A * L * L;
  // 2 bytes a value: a lower bound under bf16 autocast as well as fp32.
  e.activation_bytes = 2 * (applications * per_application + B * L * E + 2 * B * predictions_per_example * V);
  return e;
}

double physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

void require_memory_fits(const MemoryEstimate& e, double available, const std::string& batch_key, int64_t batch_size,
                         const std::string& length_key, int64_t seq_length) {
  if (available <= 0 || e.total_bytes() <= available) return;
  char params[32];
  std::snprintf(params, sizeof params, "%.3g", e.parameters);
  throw Error("this run needs at least " + gib(e.total_bytes()) + " of memory (" + params + " parameters: " +
              gib(e.parameter_bytes) + " with gradients and optimiser state; activations of " + batch_key + " " +
              std::to_string(batch_size) + " x " + length_key + " " + std::to_string(seq_length) + ": " +
              gib(e.activation_bytes) + ") but this machine has " + gib(available) +
              "; make the model (model.hidden_size, model.intermediate_size, model.vocab_size) or the batch smaller");
}

}  // namespace tisa::train
