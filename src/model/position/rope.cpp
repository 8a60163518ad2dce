// RoPE; see rope.h.
#include "model/position/rope.h"

#include <torch/torch.h>

#include <sstream>

#include "common/error.h"

namespace tisa::model {

void RopeSettings::validate(const config::ModelConfig& m, bool selected, config::SettingsProblems& p) const {
  p.positive("base", base);
  if (selected && m.num_attention_heads >= 1 && (m.hidden_size / m.num_attention_heads) % 2 != 0)
    p.add_key("model.position.relative", "rope needs an even head size (hidden_size / num_attention_heads), got " +
                                             std::to_string(m.hidden_size / m.num_attention_heads));
}

std::unique_ptr<config::SchemeSettings> make_rope_settings() { return config::make_settings<RopeSettings>(); }

std::shared_ptr<RelativeSchemeImpl> make_rope_scheme(const config::ModelConfig& c) {
  const int64_t d = c.hidden_size / c.num_attention_heads;
  if (d % 2 != 0) throw Error("rope: the head size (" + std::to_string(d) + ") must be even");
  return std::make_shared<RopeImpl>(c.num_attention_heads, d, c.position.settings<RopeSettings>().base);
}

RopeImpl::RopeImpl(int64_t num_heads, int64_t head_size, double base)
    : num_heads_(num_heads), head_size_(head_size), base_(base) {
  TORCH_CHECK(head_size % 2 == 0, "rope: head size must be even, got ", head_size);
  TORCH_CHECK(base > 0, "rope: base must be > 0, got ", base);
}

void RopeImpl::ensure_tables(int64_t length, const torch::TensorOptions& options) {
  if (cos_.defined() && cos_.size(0) == length && cos_.scalar_type() == options.dtype().toScalarType() &&
      cos_.device() == options.device())
    return;
  auto f64 = torch::TensorOptions().dtype(torch::kDouble);
  auto inv_freq = torch::pow(base_, -torch::arange(0, head_size_, 2, f64) / static_cast<double>(head_size_));  // [d/2]
  auto angles = torch::outer(torch::arange(length, f64), inv_freq);                 // [L, d/2]: m θ_i
  auto emb = torch::cat({angles, angles}, -1);                                      // [L, d]
  cos_ = emb.cos().to(options);
  sin_ = emb.sin().to(options);
}

torch::Tensor RopeImpl::rotate(const torch::Tensor& x) {
  const int64_t L = x.size(-2), half = head_size_ / 2;
  ensure_tables(L, x.options());
  auto rotated = torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);  // [..., L, d]
  return x * cos_ + rotated * sin_;
}

void RopeImpl::transform_qk(torch::Tensor& q, torch::Tensor& k) {
  q = rotate(q);  // [B, H, L, d]
  k = rotate(k);
}

std::string RopeImpl::describe() const {
  std::ostringstream s;
  s << "base " << base_;
  return s.str();
}

double RopeImpl::flops(int64_t batch, int64_t length) const {
  return 2.0 * 3.0 * batch * num_heads_ * length * head_size_;  // q and k: two products and a sum
}

}  // namespace tisa::model
