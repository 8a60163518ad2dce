// Shaw et al. (2018) relative positions (SPEC §2): e_ij = q_i·(k_j + aK[clip(j−i, k)])ᵀ/√d and
// z_i = Σ_j α_ij (v_j + aV[clip(j−i, k)]). Tables [2k+1, d], row r ↔ offset r − k, shared by the
// heads of a layer. Neither term materialises an [L, L, d] tensor. Two ways to get there, with
// w = min(k, L−1) (rows beyond ±(L−1) cannot be reached):
//  - gather (short clip, 2w+1 < L): q·aKᵀ is [B, H, L, 2w+1] and is gathered by offset; the value
//    term scatter-adds α into 2w+1 offset buckets and multiplies by aV. Few FLOPs, but the int64
//    gather/scatter over [B, H, L, L] is slow when 2w+1 approaches L.
//  - skew (long clip, 2w+1 ≥ L): the table is expanded to all 2L−1 offsets (rows clipped), q·aKᵀ
//    is [B, H, L, 2L−1], and element (i, j−i+L−1) of each row is read by a strided view: in the
//    flattened [L·(2L−1)] buffer it sits at (L−1) + i·(2L−2) + j, so dropping L−1 leading elements
//    and viewing as [L, 2L−2] puts it at (i, j). The value term runs the same map backwards with
//    zero padding (pad α to [L, 2L−2], flatten, pad L−1 in front and 1 behind, view as
//    [L, 2L−1]) and multiplies by the expanded aV. Only views, pads and matmuls: no index tensors.
// Parameters: `keys` [2k+1, d] and, with values, `values` [2k+1, d]; initialised N(0, init_std).
// Sharing (one module per layer, per attention module or for the model) is position.sharing.
#pragma once
#include "config/config.h"
#include "model/position/relative_scheme.h"

namespace tisa::model {

// Settings of the shaw scheme: model.position.shaw.
struct ShawSettings {
  static constexpr const char* kName = "shaw";
  int64_t max_distance = 16;  // clip distance k: offsets beyond ±k share a row
  bool values = true;         // also add aV to the values (false = keys only, as HF relative_key)
  // Legacy sharing switches, kept so that existing configs and checkpoints load; position.sharing
  // says the same for every scheme. per_layer: false = sharing model; per_attention_module: true
  // (with per_layer: false) = sharing per_module (HF relative_key's layout, set by its import).
  bool per_layer = true;
  bool per_attention_module = false;
  // Scale of the key term: "after" = added after 1/sqrt(d) (HF ALBERT 4.30 import keeps exactness
  // by scaling the table), fixed here for clarity; see SPEC §2.
  void visit(config::FieldVisitor& v) {
    v.field("max_distance", max_distance, "clip distance k (rows 2k+1)");
    v.field("values", values, "add the value term aV");
    v.field("per_layer", per_layer, "one module per layer (false: shared across layers)");
    v.field("per_attention_module", per_attention_module,
            "one module per attention module (group x inner layer), shared like its weights (HF relative_key)");
  }
  void validate(const config::ModelConfig& model, bool selected, config::SettingsProblems& p) const;
  std::optional<config::PositionSharing> legacy_sharing() const;
  // "hf": k = P − 1 and no value term, HF's relative_key (SPEC §2); "tiny": k = 3, shorter than
  // test inputs (the gather path).
  bool apply_preset(const std::string& preset, const config::ModelConfig& model);
  static std::vector<std::string> presets() { return {"hf", "tiny"}; }
};

struct ShawImpl : RelativeSchemeImpl {
  // kAuto picks skew when 2w+1 ≥ L (and L ≥ 2), else gather; the others force one (tests, bench).
  // kNaive materialises the [L, L, d] tables (einsum with q and with α), as a direct
  // implementation and HF's relative_key do: a reference for the bench's memory comparison only.
  enum class Strategy { kAuto, kGather, kSkew, kNaive };

  ShawImpl(int64_t max_distance, int64_t head_size, bool values, double init_std);
  torch::Tensor add_to_logits(torch::Tensor logits, const torch::Tensor& q) override;
  torch::Tensor add_to_output(torch::Tensor out, const torch::Tensor& probs) override;
  bool has_output_term() const override { return values_.defined(); }
  // min(k, L − 1) (kNaive, the bench's reference, keeps its own path).
  int64_t offset_window(int64_t length) const override;
  torch::Tensor offset_logits(const torch::Tensor& q) override;
  torch::Tensor add_bucketed_output(torch::Tensor out, const torch::Tensor& buckets) override;
  std::string describe() const override;
  std::vector<std::string> computations() const override { return {"gather", "skew", "naive"}; }
  bool use_computation(const std::string& name) override;
  double flops(int64_t batch, int64_t length) const override;

  int64_t max_distance() const { return max_distance_; }
  bool has_values() const { return values_.defined(); }
  // [L, L] int64 bucket index clip(j − i, w) + w on `device`, with w = min(k, L − 1).
  torch::Tensor offset_index(int64_t length, const torch::Device& device) const;
  // Whether sequences of `length` tokens take the skew path under the current strategy.
  bool uses_skew(int64_t length) const;
  void set_strategy(Strategy s) { strategy_ = s; }

  int64_t num_heads = 1;  // heads of the attention it serves (flops() only; set by make_shaw_scheme)
  torch::Tensor keys_;    // [2k+1, d]
  torch::Tensor values_;  // [2k+1, d] or undefined

 private:
  // `table` [2k+1, d] expanded to the 2L−1 offsets −(L−1) … L−1 (clipped to ±k): [2L−1, d].
  torch::Tensor all_offsets(const torch::Tensor& table, int64_t length) const;
  // `table` [2k+1, d] as one row per (i, j): [L, L, d] (kNaive only).
  torch::Tensor per_pair(const torch::Tensor& table, int64_t length) const;

  int64_t max_distance_;
  int64_t head_size_;
  Strategy strategy_ = Strategy::kAuto;
};
TORCH_MODULE(Shaw);

// One module of the configured shaw scheme (registry.cpp).
std::shared_ptr<RelativeSchemeImpl> make_shaw_scheme(const config::ModelConfig& c);

}  // namespace tisa::model
