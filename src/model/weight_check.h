// The one place that decides whether loaded weights are usable: floating point (a BOOL or I64
// tensor where a weight belongs is a wrong file, not something to cast), and finite (a NaN or Inf
// weight makes every result NaN, or worse, plausible: a NaN position table once analysed as
// perfectly translation invariant). Used by every loader of model weights (hf_checkpoint.cpp's
// load_state_dict, the analysis' checkpoint reader).
#pragma once
#include <ATen/core/Tensor.h>

#include <string>

namespace tisa::model {

// Throws tisa::Error "<source>: tensor '<name>' has N NaN and M Inf values (of K) ..." when `t`
// holds a non-finite value. Integer and bool tensors are finite by construction.
void require_finite(const at::Tensor& t, const std::string& name, const std::string& source);

// Throws tisa::Error "<source>: tensor '<name>' has dtype <D>; model weights are floating point
// (F32, F16, BF16 or F64)" for any other dtype.
void require_floating_weight(const at::Tensor& t, const std::string& name, const std::string& source);

}  // namespace tisa::model
