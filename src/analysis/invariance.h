// Degree of translation invariance (SPEC §9, the paper's section 3) and the matrices it is
// measured on: the Gram matrix of an absolute position table and each first-layer head's
// position-to-position logit term. A relative scheme's own term against j − i is the scheme's to
// give (offset_profile, model/position/relative_scheme.h; checkpoint_analysis.cpp).
//
// All results are computed in float64 on the device of the inputs, without gradients. Callers
// pass plain tensors (no module types), so the trainer can call position_invariance() at every
// evaluation with its model's parameters, and `tisa-train analyze` with tensors read from a
// checkpoint.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace torch::nn {
class Module;
}

namespace tisa::analysis {

// T(A) for a square matrix A [n, n]: every diagonal (fixed j − i) replaced by its mean. Returns
// float64 [n, n]. Also accepts a batch [..., n, n] (projection per matrix).
at::Tensor toeplitz_projection(const at::Tensor& a);

// Means of the 2n−1 diagonals of A [n, n], indexed by r = j − i from −(n−1) to n−1 (index
// r + n − 1): the "effective offset kernel" of A. float64 [2n−1].
at::Tensor diagonal_means(const at::Tensor& a);

// τ(A) = 1 − ‖A − T(A)‖²_F / ‖A − mean(A)‖²_F ∈ [0, 1] (SPEC §9): the share of A's variance
// that a Toeplitz matrix explains. A (numerically) constant matrix is Toeplitz: τ = 1 (ours).
// Adding a constant to A leaves τ unchanged; 1 exactly for Toeplitz A (up to rounding).
double translation_invariance(const at::Tensor& a);

// Gram matrix P[:n]·P[:n]ᵀ of a position table P [rows, E]. float64 [n, n].
at::Tensor position_gram(const at::Tensor& position_table, int64_t n);

// First-layer position-to-position logit term per head (SPEC §9):
//   X = P[:n] (E columns);  M = X·Wmᵀ + bm  (Wm [H, E], bm [H]; identity when mapping_w is
//   undefined);  Q = M·WQᵀ + bQ, K = M·WKᵀ + bK ([H, H] weights in torch Linear layout
//   [out, in], biases [H] or undefined);  F̂_h = Q_h·K_hᵀ / √d with d = H / heads.
// No LayerNorm: the formula is taken as SPEC §9 writes it, for every model type. Returns float64
// [heads, n, n].
at::Tensor head_position_logits(const at::Tensor& position_table, const at::Tensor& mapping_w,
                                const at::Tensor& mapping_b, const at::Tensor& q_w, const at::Tensor& q_b,
                                const at::Tensor& k_w, const at::Tensor& k_b, int64_t heads, int64_t n);

struct InvarianceSummary {
  double tau_gram = 0;              // τ(P·Pᵀ)
  std::vector<double> tau_heads;    // τ(F̂_h), h = 0..heads−1
  double tau_heads_mean = 0;        // mean of tau_heads
};

// τ of the Gram matrix and of each first-layer head's position term, for a model with an
// absolute position table. For ALBERT pass albert.embeddings.position_embeddings.weight [P, E],
// albert.encoder.embedding_hidden_mapping_in.{weight,bias} and the first layer's
// attention.{query,key}.{weight,bias}; for models without an E→H mapping pass undefined tensors
// (at::Tensor()) as mapping_w/mapping_b. n = number of leading positions analysed (≤ rows of P;
// e.g. the evaluation sequence length). Cost: O(heads·n²·d).
// Logged by the trainer as eval metrics "tau_gram", "tau_heads_mean" (and "tau_heads").
InvarianceSummary position_invariance(const at::Tensor& position_table, const at::Tensor& mapping_w,
                                      const at::Tensor& mapping_b, const at::Tensor& q_w, const at::Tensor& q_b,
                                      const at::Tensor& k_w, const at::Tensor& k_b, int64_t heads, int64_t n);

// The same for an ALBERT module, found by its HF parameter names (SPEC §3), with or without the
// "albert." prefix (AlbertForPreTraining / AlbertModel): embeddings.position_embeddings.weight,
// encoder.embedding_hidden_mapping_in.*, encoder.albert_layer_groups.0.albert_layers.0.attention.
// {query,key}.*. std::nullopt when the model has no absolute table (position.absolute = false).
// Trainer use at each evaluation:
//   if (auto tau = analysis::model_position_invariance(*model, cfg.model.num_attention_heads,
//                                                      std::min(max_seq_length, max_position)))
//     eval_values.update(analysis::to_json(*tau));   // tau_gram, tau_heads_mean, tau_heads
std::optional<InvarianceSummary> model_position_invariance(const torch::nn::Module& model, int64_t heads, int64_t n);

// {"tau_gram": …, "tau_heads_mean": …, "tau_heads": […]} (the keys `tisa-train plot` knows).
nlohmann::json to_json(const InvarianceSummary& summary);

}  // namespace tisa::analysis
