// The one interface of position schemes (SPEC §2, STYLE §3). Every scheme of src/model/position/
// except the learned absolute table (absolute.h, owned by the embeddings for its HF name) is a
// RelativeSchemeImpl built by the table in registry.cpp, and says itself what it adds and where.
//
// Hooks, in the order a model forward calls them (each default adds nothing):
//   begin_forward(L)                  once per model forward on every scheme module, before any
//                                     layer: batch-independent terms (TISA's, T5's [H, L, L] bias)
//                                     are computed here once, never per example or per layer;
//   x = add_to_embeddings(x)          x [B, L, E] = word + token-type (+ learned table), before
//                                     the embedding LayerNorm (sinusoidal absolute);
//   transform_qk(q, k)                q, k [B, H, L, d] per-head projections, before q·kᵀ (RoPE);
//   logits = add_to_logits(logits, q) logits [B, H, L, L], already divided by sqrt(d), before the
//                                     padding mask; q [B, H, L, d] (after transform_qk) unscaled:
//                                     a scheme scales its own term. It must accept logits of any
//                                     shape that broadcasts to [B, H, L, L]: the fused path hands it
//                                     the [B, 1, 1, L] padding mask and uses the sum as SDPA's
//                                     attn_mask. A bias may be [H, L, L] or [B, H, L, L];
//   ... mask, softmax, dropout ...
//   out = add_to_output(out, probs)   out [B, H, L, d] = probs·V, probs [B, H, L, L] (Shaw's aV).
//
// Besides the hooks a scheme answers what the rest of the program asks about it (model summary,
// paper report, analysis, bench): a one-line description, its extra FLOPs, the other ways it can
// compute its terms (bench labels) and, for terms that depend on the offset only, its per-head
// position term against j − i.
#pragma once
#include <torch/nn/module.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tisa::model {

struct RelativeSchemeImpl : torch::nn::Module {
  virtual void begin_forward(int64_t length) { (void)length; }
  virtual torch::Tensor add_to_embeddings(torch::Tensor x) { return x; }
  virtual void transform_qk(torch::Tensor& q, torch::Tensor& k) {
    (void)q;
    (void)k;
  }
  virtual torch::Tensor add_to_logits(torch::Tensor logits, const torch::Tensor& q) {
    (void)q;
    return logits;
  }
  virtual torch::Tensor add_to_output(torch::Tensor out, const torch::Tensor& probs) {
    (void)probs;
    return out;
  }
  // Whether add_to_output() adds anything. Schemes without an output term are pure logit biases
  // (or q/k transforms), which the fused attention path takes (model/fused_attention.h).
  virtual bool has_output_term() const { return false; }
  // Where the scheme's terms depend on the clipped offset r = clip(j − i, −w, w) + w alone (Shaw's):
  // w at `length`, so that the CPU attention kernel computes them (model/cpu_attention.h); −1 where
  // they do not. Then the whole logit term is offset_logits(q), E [B, H, L, 2w+1] with e_ij += E_i,r
  // (already scaled; undefined: none), instead of add_to_logits; and the whole output term is
  // add_bucketed_output(out, B) over the probabilities summed by offset, B [B, H, L, 2w+1] float32,
  // instead of add_to_output.
  virtual int64_t offset_window(int64_t length) const {
    (void)length;
    return -1;
  }
  virtual torch::Tensor offset_logits(const torch::Tensor& q) {
    (void)q;
    return {};
  }
  virtual torch::Tensor add_bucketed_output(torch::Tensor out, const torch::Tensor& buckets) {
    (void)buckets;
    return out;
  }

  // One line, e.g. "S=5" or "k=16, keys+values" (the registry adds the scheme name and sharing).
  virtual std::string describe() const { return ""; }
  // Extra forward FLOPs (multiply-add = 2) of one layer application on `batch` sequences of
  // `length` tokens; terms computed once per forward (begin_forward) are counted in full.
  virtual double flops(int64_t batch, int64_t length) const {
    (void)batch;
    (void)length;
    return 0.0;
  }
  // The per-head position term against the offset r = j − i for r = −(n−1) … n−1: [H, 2n−1] on
  // the CPU, float64, computed in the precision of the module's parameters (the analysis converts
  // a module to float64 first). Undefined when the term is not a function of j − i alone (RoPE and
  // Shaw depend on the content, FIRE on i too, sinusoidal enters the embeddings).
  virtual torch::Tensor offset_profile(int64_t n) const {
    (void)n;
    return {};
  }

  // Other ways to compute the same terms, by name, for benchmarks and tests (Shaw: gather, skew,
  // naive); use_computation() returns false for a name the scheme does not offer.
  virtual std::vector<std::string> computations() const { return {}; }
  virtual bool use_computation(const std::string& name) {
    (void)name;
    return false;
  }

  // Parameters of this module (for the positional-parameter count of `model summary`).
  int64_t parameter_count() const {
    int64_t n = 0;
    for (const auto& p : parameters()) n += p.numel();
    return n;
  }
};

// Logits of one attention layer with a scheme's terms (null: none): transform_qk, q·kᵀ/√d,
// add_to_logits. q, k [B, H, L, d] are replaced by their transformed values. → [B, H, L, L].
// The attention's eager path and the scheme tests use this one function.
torch::Tensor scheme_logits(torch::Tensor& q, torch::Tensor& k, RelativeSchemeImpl* scheme);

// logits + a scheme's logit bias, in the logits' dtype. Under bf16 autocast q·kᵀ comes out of a
// bf16 matrix product; a float32 bias [H, L, L] would promote the whole [B, H, L, L] sum to
// float32, and with it the mask, the softmax and the cast back before probs·V, forward and
// backward (docs/perf/README.md, "Attention in the logits' dtype"). The bias is cast instead:
// [H, L, L], not [B, H, L, L].
torch::Tensor add_logit_bias(const torch::Tensor& logits, const torch::Tensor& bias);

// The [H, L, L] Toeplitz matrix m[h, i, j] = f[h, (j − i) + L − 1] of a per-offset table
// f [H, 2L−1] (offsets −(L−1) … L−1), without an index tensor: window k of f holds f[k .. k+L−1],
// so row i of the flipped windows is f[L−1−i+j]. Its backward sums contiguous windows.
torch::Tensor toeplitz_from_offsets(const torch::Tensor& f, int64_t length);

// A scheme whose whole term is a batch-independent bias [H, L, L] on the logits: bias(L) is
// computed once per forward (begin_forward) and added by every layer that uses the module (FIRE).
struct LogitBiasScheme : RelativeSchemeImpl {
  virtual torch::Tensor bias(int64_t length) const = 0;  // [H, L, L]
  void begin_forward(int64_t length) override;
  torch::Tensor add_to_logits(torch::Tensor logits, const torch::Tensor& q) override;

 private:
  torch::Tensor cached_bias_;  // from begin_forward(), [H, L, L]
};

// A logit bias that is a per-head function of j − i alone (TISA, T5, KERPLE-log, learned ALiBi):
// scores(L) holds it for the offsets −(L−1) … L−1 ([H, 2L−1]); the bias is their Toeplitz matrix
// and offset_profile() their values.
struct OffsetBiasScheme : LogitBiasScheme {
  virtual torch::Tensor scores(int64_t length) const = 0;  // [H, 2L−1]
  torch::Tensor bias(int64_t length) const override { return toeplitz_from_offsets(scores(length), length); }
  torch::Tensor offset_profile(int64_t n) const override;
};

}  // namespace tisa::model
