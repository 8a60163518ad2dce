// Fixed sinusoidal absolute positions; see sinusoidal.h.
#include "model/position/sinusoidal.h"

#include <torch/torch.h>

#include <cmath>

#include "common/error.h"

namespace tisa::model {

void SinusoidalSettings::validate(const config::ModelConfig& model, bool selected, config::SettingsProblems& p) const {
  (void)model;
  (void)selected;
  if (scale != "init" && scale != "sqrt_e" && scale != "unit")
    p.add("scale", "expected init, sqrt_e or unit, got '" + scale + "'");
}

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

std::unique_ptr<config::SchemeSettings> make_sinusoidal_settings() { return config::make_settings<SinusoidalSettings>(); }

std::shared_ptr<RelativeSchemeImpl> make_sinusoidal_scheme(const config::ModelConfig& c) {
  const std::string& scale = c.position.settings<SinusoidalSettings>().scale;
  if (scale == "init")  // mean square of the table = initializer_range², that of the learned table
    return std::make_shared<SinusoidalImpl>(c.embedding_size, c.initializer_range * std::sqrt(2.0), 1.0);
  if (scale == "sqrt_e")
    return std::make_shared<SinusoidalImpl>(c.embedding_size, 1.0, std::sqrt(static_cast<double>(c.embedding_size)));
  if (scale == "unit") return std::make_shared<SinusoidalImpl>(c.embedding_size, 1.0, 1.0);
  throw Error("model.position.sinusoidal.scale: expected init, sqrt_e or unit, got '" + scale + "'");
}

SinusoidalImpl::SinusoidalImpl(int64_t embedding_size, double table_factor, double embedding_factor)
    : embedding_size_(embedding_size), table_factor_(table_factor), embedding_factor_(embedding_factor) {}

torch::Tensor SinusoidalImpl::add_to_embeddings(torch::Tensor x) {
  const int64_t L = x.size(1);
  if (!cached_.defined() || cached_.size(0) != L || cached_.scalar_type() != x.scalar_type() ||
      cached_.device() != x.device())
    cached_ = (sinusoidal_table(L, embedding_size_) * table_factor_).to(x.options());
  if (embedding_factor_ != 1.0) x = x * embedding_factor_;
  return x + cached_;                                                           // [B, L, E]
}

std::string SinusoidalImpl::describe() const {
  std::string s = "fixed, E=" + std::to_string(embedding_size_);
  char buf[96];
  if (embedding_factor_ != 1.0) std::snprintf(buf, sizeof buf, ", embeddings x %.4g", embedding_factor_), s += buf;
  if (table_factor_ != 1.0) std::snprintf(buf, sizeof buf, ", table x %.4g", table_factor_), s += buf;
  return s;
}

double SinusoidalImpl::flops(int64_t batch, int64_t length) const {
  (void)batch;
  (void)length;
  return 0.0;  // once per model, not per layer: the embedding add is negligible
}

}  // namespace tisa::model
