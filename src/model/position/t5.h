// T5 relative attention bias (Raffel et al. 2020), bidirectional: a learned scalar per head and
// offset bucket, bias[h, i, j] = table[bucket(j − i), h], added after 1/√d and before the mask.
// Buckets as transformers' T5Attention._relative_position_bucket(bidirectional=True): half of the
// num_buckets for j > i (offset by num_buckets/2), half for j ≤ i; within a side, exact buckets
// for |j − i| < num_buckets/4, then log-spaced up to max_distance (computed in float32 as T5 does),
// clamped to the side's last bucket. Parameter `table` [num_buckets, H] (T5's
// relative_attention_bias.weight), initialised N(0, initializer_range). The [H, L, L] bias is
// computed once per forward (begin_forward) from the 2L−1 offsets and shared by the batch.
// Golden: ../shared/golden/schemes/t5_* (tests/model/position/t5_test.cpp).
#pragma once
#include "config/config.h"
#include "model/position/relative_scheme.h"

namespace tisa::model {

// Settings of the t5 scheme: model.position.t5.
struct T5Settings {
  static constexpr const char* kName = "t5";
  int64_t num_buckets = 32;    // half for j < i, half for j > i
  int64_t max_distance = 128;  // offsets from here on share the last bucket
  void visit(config::FieldVisitor& v) {
    v.field("num_buckets", num_buckets, "buckets (half per direction; exact below num_buckets/4)");
    v.field("max_distance", max_distance, "offsets at or beyond this share the last bucket of their side");
  }
  void validate(const config::ModelConfig& model, bool selected, config::SettingsProblems& p) const;
  // "tiny": 8 buckets up to distance 16, so that inputs of a dozen tokens reach the log buckets.
  bool apply_preset(const std::string& preset, const config::ModelConfig& model);
  static std::vector<std::string> presets() { return {"tiny"}; }
};

// Bucket of each relative position (int64 tensor of j − i) → int64 tensor of the same shape.
torch::Tensor t5_relative_bucket(const torch::Tensor& relative_position, int64_t num_buckets, int64_t max_distance);

struct T5BiasImpl : OffsetBiasScheme {
  T5BiasImpl(int64_t num_heads, int64_t num_buckets, int64_t max_distance, double init_std);
  std::string describe() const override;
  double flops(int64_t batch, int64_t length) const override;

  // Per-offset bias for offsets −(L−1) … L−1: [H, 2L−1].
  torch::Tensor scores(int64_t length) const override;

  torch::Tensor table_;  // [num_buckets, H]

 private:
  int64_t num_buckets_, max_distance_;
};
TORCH_MODULE(T5Bias);

std::shared_ptr<RelativeSchemeImpl> make_t5_scheme(const config::ModelConfig& c);

}  // namespace tisa::model
