// Tolerance check of the goldens: close(atol, rtol) ⇔ |x − ref| ≤ atol + rtol·|ref| elementwise.
#pragma once
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

namespace tisa::test {

inline ::testing::AssertionResult close(const torch::Tensor& got, const torch::Tensor& ref, double atol, double rtol,
                                        const std::string& what) {
  if (!got.defined()) return ::testing::AssertionFailure() << what << ": tensor not computed";
  if (got.sizes() != ref.sizes())
    return ::testing::AssertionFailure() << what << ": shape " << got.sizes() << " vs reference " << ref.sizes();
  auto g = got.detach().to(torch::kCPU, torch::kDouble);
  auto r = ref.detach().to(torch::kCPU, torch::kDouble);
  auto diff = (g - r).abs();
  auto excess = diff - (atol + rtol * r.abs());
  if (g.numel() == 0 || excess.max().item<double>() <= 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": max |Δ| " << diff.max().item<double>() << " exceeds close("
                                       << atol << ", " << rtol << ") at " << (excess > 0).sum().item<int64_t>()
                                       << " of " << g.numel() << " elements";
}

}  // namespace tisa::test
