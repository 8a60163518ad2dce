// `tisa-train bench --gemm`: the products it times, and the oneDNN row where the build has it.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>

#include "bench/bench.h"
#include "common/error.h"
#include "model/cpu_linear.h"

namespace {

TEST(BenchGemm, ListsTheOneDnnProductsWhereBuilt) {
  const auto specs = tisa::bench::default_gemm_specs(256, 128, 512);
  const auto count = [&](const char* dtype) {
    return std::count_if(specs.begin(), specs.end(), [&](const auto& s) { return s.dtype == dtype; });
  };
  EXPECT_EQ(count("f32"), 4);
  EXPECT_EQ(count("bf16"), 4);
  EXPECT_EQ(count("f32-onednn"), tisa::model::onednn_sgemm_built() ? 4 : 0);
}

TEST(BenchGemm, TimesEachLibraryAndLeavesTheChoiceAsItWas) {
  const auto before = tisa::model::f32_products();
  for (const char* dtype : {"f32", "f32-onednn", "bf16"}) {
    if (std::string(dtype) == "f32-onednn" && !tisa::model::onednn_sgemm_built()) continue;
    tisa::bench::GemmSpec s;
    s.m = 64;
    s.n = 48;
    s.k = 32;
    s.dtype = dtype;
    s.reps = 2;
    s.warmup = 1;
    const auto r = tisa::bench::run_gemm(s);
    EXPECT_GT(r.gflops_median, 0.0) << dtype;
    EXPECT_EQ(tisa::model::f32_products(), before) << dtype;
  }
  tisa::bench::GemmSpec bad;
  bad.dtype = "f16";
  EXPECT_THROW(tisa::bench::run_gemm(bad), tisa::Error);
}

}  // namespace
