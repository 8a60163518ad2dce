// Shaw et al. (2018) relative positions (SPEC §2): e_ij = q_i·(k_j + aK[clip(j−i, k)])ᵀ/√d and
// z_i = Σ_j α_ij (v_j + aV[clip(j−i, k)]). Tables [2k+1, d], row r ↔ offset r − k, shared by the
// heads of a layer. Neither term materialises an [L, L, d] tensor: the key term is q·aKᵀ
// ([B, H, L, 2w+1]) gathered by offset, the value term sums α into 2w+1 offset buckets and
// multiplies by aV, with w = min(k, L−1) (rows beyond ±(L−1) cannot be reached).
// Parameters: `keys` [2k+1, d] and, with values, `values` [2k+1, d]; initialised N(0, init_std).
#pragma once
#include "model/position/relative_scheme.h"

namespace tisa::model {

struct ShawImpl : RelativeSchemeImpl {
  ShawImpl(int64_t max_distance, int64_t head_size, bool values, double init_std);
  torch::Tensor add_to_logits(torch::Tensor logits, const torch::Tensor& q) override;
  torch::Tensor add_to_output(torch::Tensor out, const torch::Tensor& probs) override;

  int64_t max_distance() const { return max_distance_; }
  bool has_values() const { return values_.defined(); }
  // [L, L] int64 bucket index clip(j − i, w) + w on `device`, with w = min(k, L − 1).
  torch::Tensor offset_index(int64_t length, const torch::Device& device) const;

  torch::Tensor keys_;    // [2k+1, d]
  torch::Tensor values_;  // [2k+1, d] or undefined

 private:
  int64_t max_distance_;
  int64_t head_size_;
};
TORCH_MODULE(Shaw);

}  // namespace tisa::model
