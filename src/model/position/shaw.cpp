// Shaw relative positions; see shaw.h.
#include "model/position/shaw.h"

#include <cmath>

#include "common/error.h"

namespace tisa::model {

ShawImpl::ShawImpl(int64_t max_distance, int64_t head_size, bool values, double init_std)
    : max_distance_(max_distance), head_size_(head_size) {
  TORCH_CHECK(max_distance >= 0, "shaw: max_distance must be >= 0, got ", max_distance);
  keys_ = register_parameter("keys", torch::randn({2 * max_distance + 1, head_size}) * init_std);
  if (values) values_ = register_parameter("values", torch::randn({2 * max_distance + 1, head_size}) * init_std);
}

void ShawSettings::validate(const config::ModelConfig&, bool, config::SettingsProblems& p) const {
  p.at_least("max_distance", max_distance, 1);
  // Tables of 2k+1 rows are allocated from it; offsets beyond k share the last row anyway.
  p.at_most("max_distance", max_distance, 65536, "each table holds 2·max_distance+1 rows");
  if (per_attention_module && per_layer) p.add("per_attention_module", "needs model.position.shaw.per_layer: false");
}

std::optional<config::PositionSharing> ShawSettings::legacy_sharing() const {
  if (per_attention_module) return config::PositionSharing::kPerModule;
  if (!per_layer) return config::PositionSharing::kModel;
  return std::nullopt;
}

bool ShawSettings::apply_preset(const std::string& preset, const config::ModelConfig& model) {
  if (preset == "tiny") {
    max_distance = 3;
    return true;
  }
  if (preset != "hf") return false;
  max_distance = model.max_position_embeddings - 1;
  values = false;
  return true;
}

std::unique_ptr<config::SchemeSettings> make_shaw_settings() { return config::make_settings<ShawSettings>(); }

std::shared_ptr<RelativeSchemeImpl> make_shaw_scheme(const config::ModelConfig& c) {
  const auto& s = c.position.settings<ShawSettings>();
  auto m = std::make_shared<ShawImpl>(s.max_distance, c.hidden_size / c.num_attention_heads, s.values,
                                      c.initializer_range);
  m->num_heads = c.num_attention_heads;
  return m;
}

std::string ShawImpl::describe() const {
  return "k=" + std::to_string(max_distance_) + (values_.defined() ? ", keys+values" : ", keys");
}

double ShawImpl::flops(int64_t batch, int64_t length) const {
  // q·aKᵀ over 2w+1 offsets per head (and α-buckets·aV): [B, H, L, 2w+1] × d multiply-adds each.
  const double w = static_cast<double>(std::min(max_distance_, length - 1));
  return 2.0 * batch * num_heads * length * (2 * w + 1) * head_size_ * (values_.defined() ? 2 : 1);
}

torch::Tensor ShawImpl::offset_index(int64_t length, const torch::Device& device) const {
  const int64_t w = std::min(max_distance_, length - 1);
  auto pos = torch::arange(length, torch::TensorOptions().dtype(torch::kLong).device(device));
  auto rel = pos.unsqueeze(0) - pos.unsqueeze(1);  // [L, L]: j − i
  return rel.clamp(-w, w) + w;
}

bool ShawImpl::use_computation(const std::string& name) {
  if (name == "gather") strategy_ = Strategy::kGather;
  else if (name == "skew") strategy_ = Strategy::kSkew;
  else if (name == "naive") strategy_ = Strategy::kNaive;
  else return false;
  return true;
}

torch::Tensor ShawImpl::per_pair(const torch::Tensor& table, int64_t length) const {
  const int64_t w = std::min(max_distance_, length - 1);
  auto idx = offset_index(length, table.device()) + (max_distance_ - w);                 // [L, L] rows of the table
  return table.index_select(0, idx.reshape({-1})).view({length, length, table.size(1)});  // [L, L, d]
}

bool ShawImpl::uses_skew(int64_t length) const {
  // The skew view needs 2L−2 ≥ L; kGather and kNaive never take it.
  if (length < 2 || strategy_ == Strategy::kGather || strategy_ == Strategy::kNaive) return false;
  if (strategy_ == Strategy::kSkew) return true;
  return 2 * std::min(max_distance_, length - 1) + 1 >= length;
}

torch::Tensor ShawImpl::all_offsets(const torch::Tensor& table, int64_t length) const {
  const int64_t L = length, k = max_distance_;
  if (k >= L - 1) return table.narrow(0, k - (L - 1), 2 * L - 1);  // no clipping needed: a view
  auto r = torch::arange(-(L - 1), L, torch::TensorOptions().dtype(torch::kLong).device(table.device()));
  return table.index_select(0, r.clamp(-k, k) + k);  // a small [2L−1] gather; its backward sums rows
}

torch::Tensor ShawImpl::add_to_logits(torch::Tensor logits, const torch::Tensor& q) {
  const int64_t L = q.size(2);
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_size_));
  if (strategy_ == Strategy::kNaive) {
    auto rel = per_pair(keys_, L).to(q.scalar_type());                              // [L, L, d]
    return logits + torch::einsum("bhld,lrd->bhlr", {q, rel}) * scale;              // [B, H, L, L]
  }
  if (uses_skew(L)) {
    const int64_t B = q.size(0), H = q.size(1);
    auto qa = torch::matmul(q, all_offsets(keys_, L).t()) * scale;  // [B, H, L, 2L−1], contiguous
    auto skewed = qa.view({B, H, L * (2 * L - 1)})
                      .narrow(-1, L - 1, L * (2 * L - 2))
                      .view({B, H, L, 2 * L - 2})
                      .narrow(-1, 0, L);  // [B, H, L, L]: (i, j) ← qa(i, j − i + L − 1)
    return logits + skewed;
  }
  auto idx = offset_index(L, q.device()).expand({q.size(0), q.size(1), L, L});      // [B, H, L, L]
  return logits + offset_logits(q).gather(-1, idx);                                 // [B, H, L, 2w+1] by offset
}

int64_t ShawImpl::offset_window(int64_t length) const {
  if (strategy_ == Strategy::kNaive || length < 1) return -1;
  return std::min(max_distance_, length - 1);
}

torch::Tensor ShawImpl::offset_logits(const torch::Tensor& q) {
  const int64_t w = offset_window(q.size(2));
  TISA_CHECK(w >= 0, "Shaw: offset logits asked of the naive computation");
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_size_));
  auto table = keys_.narrow(0, max_distance_ - w, 2 * w + 1);  // [2w+1, d]: the rows reachable at this length
  return torch::matmul(q, table.t()) * scale;                   // [B, H, L, 2w+1]
}

torch::Tensor ShawImpl::add_bucketed_output(torch::Tensor out, const torch::Tensor& buckets) {
  if (!values_.defined()) return out;
  const int64_t w = (buckets.size(-1) - 1) / 2;
  TISA_CHECK(buckets.size(-1) == 2 * w + 1 && w <= max_distance_,
             "Shaw: " + std::to_string(buckets.size(-1)) + " offset buckets, expected 2w+1 with w <= " +
                 std::to_string(max_distance_));
  auto table = values_.narrow(0, max_distance_ - w, 2 * w + 1).to(buckets.scalar_type());  // [2w+1, d]
  return out + torch::matmul(buckets, table).to(out.scalar_type());                          // [B, H, L, d]
}

torch::Tensor ShawImpl::add_to_output(torch::Tensor out, const torch::Tensor& probs) {
  if (!values_.defined()) return out;
  const int64_t L = probs.size(-1);
  if (strategy_ == Strategy::kNaive) {
    auto rel = per_pair(values_, L).to(probs.scalar_type());                        // [L, L, d]
    return out + torch::einsum("bhlr,lrd->bhld", {probs, rel}).to(out.scalar_type());  // [B, H, L, d]
  }
  if (uses_skew(L)) {
    const int64_t B = probs.size(0), H = probs.size(1);
    // α(i, j) → buckets(i, j − i + L − 1): the inverse of the key term's view, with zeros elsewhere.
    auto padded = torch::constant_pad_nd(probs, {0, L - 2});                          // [B, H, L, 2L−2]
    auto buckets = torch::constant_pad_nd(padded.reshape({B, H, L * (2 * L - 2)}), {L - 1, 1})
                       .view({B, H, L, 2 * L - 1});                                    // [B, H, L, 2L−1]
    auto table = all_offsets(values_, L).to(buckets.scalar_type());                    // [2L−1, d]
    return out + torch::matmul(buckets, table).to(out.scalar_type());
  }
  const int64_t w = std::min(max_distance_, L - 1);
  auto idx = offset_index(L, probs.device()).expand(probs.sizes());                 // [B, H, L, L]
  auto sizes = probs.sizes().vec();
  sizes.back() = 2 * w + 1;
  // The edge buckets sum up to L − w probabilities each: accumulate in float32 even when the
  // probabilities are bf16 (autocast).
  const auto acc = probs.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
  auto buckets = torch::zeros(sizes, probs.options().dtype(acc)).scatter_add(-1, idx, probs.to(acc));  // [B, H, L, 2w+1]
  return add_bucketed_output(out, buckets);
}

}  // namespace tisa::model
