// Shaw relative positions; see shaw.h.
#include "model/position/shaw.h"

#include <cmath>

namespace tisa::model {

ShawImpl::ShawImpl(int64_t max_distance, int64_t head_size, bool values, double init_std)
    : max_distance_(max_distance), head_size_(head_size) {
  TORCH_CHECK(max_distance >= 0, "shaw: max_distance must be >= 0, got ", max_distance);
  keys_ = register_parameter("keys", torch::randn({2 * max_distance + 1, head_size}) * init_std);
  if (values) values_ = register_parameter("values", torch::randn({2 * max_distance + 1, head_size}) * init_std);
}

torch::Tensor ShawImpl::offset_index(int64_t length, const torch::Device& device) const {
  const int64_t w = std::min(max_distance_, length - 1);
  auto pos = torch::arange(length, torch::TensorOptions().dtype(torch::kLong).device(device));
  auto rel = pos.unsqueeze(0) - pos.unsqueeze(1);  // [L, L]: j − i
  return rel.clamp(-w, w) + w;
}

torch::Tensor ShawImpl::add_to_logits(torch::Tensor logits, const torch::Tensor& q) {
  const int64_t L = q.size(2);
  const int64_t w = std::min(max_distance_, L - 1);
  // Only rows k−w … k+w can be reached at this length.
  auto table = keys_.narrow(0, max_distance_ - w, 2 * w + 1);                       // [2w+1, d]
  auto qa = torch::matmul(q, table.t()) * (1.0 / std::sqrt(static_cast<double>(head_size_)));  // [B, H, L, 2w+1]
  auto idx = offset_index(L, q.device()).expand({q.size(0), q.size(1), L, L});      // [B, H, L, L]
  return logits + qa.gather(-1, idx);
}

torch::Tensor ShawImpl::add_to_output(torch::Tensor out, const torch::Tensor& probs) {
  if (!values_.defined()) return out;
  const int64_t L = probs.size(-1);
  const int64_t w = std::min(max_distance_, L - 1);
  auto idx = offset_index(L, probs.device()).expand(probs.sizes());                 // [B, H, L, L]
  auto sizes = probs.sizes().vec();
  sizes.back() = 2 * w + 1;
  auto buckets = torch::zeros(sizes, probs.options()).scatter_add(-1, idx, probs);  // [B, H, L, 2w+1]
  auto table = values_.narrow(0, max_distance_ - w, 2 * w + 1).to(buckets.scalar_type());  // [2w+1, d]
  return out + torch::matmul(buckets, table).to(out.scalar_type());                // [B, H, L, d]
}

}  // namespace tisa::model
