// The one interface of relative position schemes (SPEC §2, STYLE §3).
//
// A scheme contributes offset-dependent terms to one attention layer. The attention calls, per
// layer application:
//   logits = scheme->add_to_logits(logits, q);   // logits [B, H, L, L], already divided by sqrt(d),
//                                                 // before the padding mask; q [B, H, L, d] raw
//                                                 // (unscaled) queries: a scheme scales its own term
//   ... mask, softmax, dropout ...
//   out = scheme->add_to_output(out, probs);      // out [B, H, L, d] = probs·V, probs [B, H, L, L]
// add_to_logits must accept logits of any shape that broadcasts to [B, H, L, L] (the fused path
// hands it the [B, 1, 1, L] padding mask and uses the sum as the attention bias).
// begin_forward(L) is called once per model forward on every scheme module before any layer runs,
// so that batch-independent terms (TISA's [H, L, L] bias) are computed once per forward.
// Absolute positions are embedding-side and live in absolute.h, not behind this interface.
#pragma once
#include <torch/nn/module.h>

#include <cstdint>

namespace tisa::model {

struct RelativeSchemeImpl : torch::nn::Module {
  virtual void begin_forward(int64_t length) { (void)length; }
  virtual torch::Tensor add_to_logits(torch::Tensor logits, const torch::Tensor& q) = 0;
  virtual torch::Tensor add_to_output(torch::Tensor out, const torch::Tensor& probs) {
    (void)probs;
    return out;
  }
  // Whether add_to_output() adds anything. Schemes without an output term are pure logit biases,
  // which the fused attention path takes as its attn_mask (model/fused_attention.h).
  virtual bool has_output_term() const { return false; }
  // Parameters of this module (for the positional-parameter count of `model summary`).
  int64_t parameter_count() const {
    int64_t n = 0;
    for (const auto& p : parameters()) n += p.numel();
    return n;
  }
};

}  // namespace tisa::model
