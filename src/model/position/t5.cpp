// T5 relative attention bias; see t5.h.
#include "model/position/t5.h"

#include <torch/torch.h>

#include <cmath>

namespace tisa::model {

torch::Tensor t5_relative_bucket(const torch::Tensor& relative_position, int64_t num_buckets, int64_t max_distance) {
  const int64_t side = num_buckets / 2;                                     // buckets per direction
  auto buckets = (relative_position > 0).to(torch::kLong) * side;           // j > i: upper half
  auto n = relative_position.abs();
  const int64_t max_exact = side / 2;
  auto is_small = n < max_exact;
  // The same float32 operations as T5: log(n / max_exact) / log(max_distance / max_exact) · (side − max_exact).
  auto large = (torch::log(n.to(torch::kFloat) / max_exact) /
                std::log(static_cast<double>(max_distance) / static_cast<double>(max_exact)) *
                static_cast<double>(side - max_exact))
                   .to(torch::kLong) + max_exact;
  large = torch::clamp_max(large, side - 1);
  return buckets + torch::where(is_small, n, large);
}

void T5Settings::validate(const config::ModelConfig&, bool, config::SettingsProblems& p) const {
  p.at_least("num_buckets", num_buckets, 4);
  p.at_most("num_buckets", num_buckets, 65536, "the bias table holds one row per bucket; T5 uses 32");
  if (num_buckets % 2 != 0) p.add("num_buckets", "must be even (half per direction), got " + std::to_string(num_buckets));
  if (max_distance <= num_buckets / 4)
    p.add("max_distance", "must be > num_buckets / 4 (" + std::to_string(num_buckets / 4) + "), got " +
                              std::to_string(max_distance));
}

bool T5Settings::apply_preset(const std::string& preset, const config::ModelConfig&) {
  if (preset != "tiny") return false;
    num_buckets = 8;
    max_distance = 16;
  return true;
}

std::unique_ptr<config::SchemeSettings> make_t5_settings() { return config::make_settings<T5Settings>(); }

std::shared_ptr<RelativeSchemeImpl> make_t5_scheme(const config::ModelConfig& c) {
  const auto& t = c.position.settings<T5Settings>();
  return std::make_shared<T5BiasImpl>(c.num_attention_heads, t.num_buckets, t.max_distance,
                                      c.initializer_range);
}

T5BiasImpl::T5BiasImpl(int64_t num_heads, int64_t num_buckets, int64_t max_distance, double init_std)
    : num_buckets_(num_buckets), max_distance_(max_distance) {
  TORCH_CHECK(num_buckets >= 4 && num_buckets % 2 == 0, "t5: num_buckets must be even and >= 4, got ", num_buckets);
  TORCH_CHECK(max_distance > num_buckets / 4, "t5: max_distance must exceed num_buckets/4, got ", max_distance);
  table_ = register_parameter("table", torch::randn({num_buckets, num_heads}) * init_std);
}

torch::Tensor T5BiasImpl::scores(int64_t length) const {
  auto r = torch::arange(-(length - 1), length, torch::TensorOptions().dtype(torch::kLong).device(table_.device()));
  auto b = t5_relative_bucket(r, num_buckets_, max_distance_);              // [2L−1]
  return table_.index_select(0, b).t();                                     // [H, 2L−1]
}

std::string T5BiasImpl::describe() const {
  return std::to_string(num_buckets_) + " buckets, max distance " + std::to_string(max_distance_);
}

double T5BiasImpl::flops(int64_t batch, int64_t length) const {
  return static_cast<double>(batch) * table_.size(1) * length * length;    // the add; the gather is free
}

}  // namespace tisa::model
