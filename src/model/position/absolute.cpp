// Absolute position embeddings; see absolute.h.
#include "model/position/absolute.h"

namespace tisa::model {

AbsolutePositionsImpl::AbsolutePositionsImpl(int64_t max_positions, int64_t embedding_size, double init_std) {
  weight = register_parameter("weight", torch::randn({max_positions, embedding_size}) * init_std);
}

torch::Tensor AbsolutePositionsImpl::forward(int64_t length) {
  TORCH_CHECK(length <= weight.size(0), "input of ", length, " tokens is longer than max_position_embeddings (",
              weight.size(0), ")");
  return weight.narrow(0, 0, length);
}

torch::Tensor AbsolutePositionsImpl::shifted(const torch::Tensor& offsets, int64_t length) {
  TORCH_CHECK(offsets.dim() == 1, "position offsets must be [B], got ", offsets.sizes());
  // Checked on the host only (the trainer draws them there); a device copy would synchronise.
  TORCH_CHECK(!offsets.device().is_cpu() || offsets.numel() == 0 ||
                  (offsets.min().item<int64_t>() >= 0 && offsets.max().item<int64_t>() + length <= weight.size(0)),
              "shifted positions of ", length, " tokens leave the table of ", weight.size(0), " rows");
  const auto options = torch::TensorOptions().device(weight.device()).dtype(torch::kLong);
  const auto rows = offsets.to(options).unsqueeze(1) + torch::arange(length, options);  // [B, L]
  return weight.index_select(0, rows.flatten()).view({offsets.size(0), length, weight.size(1)});
}

}  // namespace tisa::model
