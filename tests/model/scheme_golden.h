// Runs one position scheme against a golden of ../shared/golden/schemes (see its README):
// logits S = (q̃·k̃ᵀ)/√d + bias from q, k [B, H, L, d], then the gradients of Σ(S·G) with respect to
// q, k and every trainable parameter of the scheme, in float64 (|x − ref| ≤ 1e-9 + 1e-7·|ref|) and
// in float32 (≤ 1e-5 + 1e-4·|ref|). The logits go through model::scheme_logits, the function the
// attention's eager path uses, after begin_forward(L) as in a model forward.
#pragma once
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <string>

#include "close.h"
#include "model/position/relative_scheme.h"
#include "model/tensor_io.h"
#include "support/test_paths.h"

namespace tisa::test {

inline model::TensorFile load_scheme_golden(const std::string& file) {
  return model::load_tensor_file(shared_path("golden/schemes/" + file));
}

// `params`: golden name (without "param_") → the scheme's parameter name.
inline void check_scheme_golden(model::RelativeSchemeImpl& scheme, const model::TensorFile& golden,
                                const std::map<std::string, std::string>& params, torch::ScalarType dtype) {
  const bool f64 = dtype == torch::kDouble;
  const double atol = f64 ? 1e-9 : 1e-5, rtol = f64 ? 1e-7 : 1e-4;
  const std::string tag = f64 ? " (float64)" : " (float32)";
  const auto& g = golden.tensors;
  scheme.to(dtype);
  {
    torch::NoGradGuard no_grad;
    auto named = scheme.named_parameters();
    for (const auto& [golden_name, ours] : params) named[ours].copy_(g.at("param_" + golden_name));
  }
  scheme.zero_grad();
  auto q = g.at("q").to(dtype).clone().requires_grad_(true);
  auto k = g.at("k").to(dtype).clone().requires_grad_(true);
  auto qt = q, kt = k;
  scheme.begin_forward(q.size(2));
  auto logits = model::scheme_logits(qt, kt, &scheme);
  EXPECT_TRUE(close(logits, g.at("logits"), atol, rtol, "logits" + tag));
  (logits * g.at("upstream").to(dtype)).sum().backward();
  EXPECT_TRUE(close(q.grad(), g.at("grad_q"), atol, rtol, "grad_q" + tag));
  EXPECT_TRUE(close(k.grad(), g.at("grad_k"), atol, rtol, "grad_k" + tag));
  auto named = scheme.named_parameters();
  for (const auto& [golden_name, ours] : params)
    EXPECT_TRUE(close(named[ours].grad(), g.at("grad_" + golden_name), atol, rtol, "grad_" + golden_name + tag));
}

}  // namespace tisa::test
