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

}  // namespace tisa::model
