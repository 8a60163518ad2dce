// Linear layers through oneDNN's sgemm (model/cpu_linear.h) against the same layer computed in
// double, in values and in the gradients of the input, weight and bias; against LibTorch's BLAS
// path to float rounding, inside the model too; the same bits run to run; autocast and other
// dtypes left to at::linear; and the rule that picks the library. Builds without oneDNN's sgemm
// (PyPI's LibTorch) skip the cases that need it, saying so.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "common/bf16.h"
#include "common/error.h"
#include "model/albert.h"
#include "model/autocast.h"
#include "model/cpu_linear.h"
#include "scheme_variants.h"

namespace {

using tisa::model::F32Products;

// Runs float32 linear layers on `products` for its lifetime.
struct ProductsScope {
  F32Products previous = tisa::model::f32_products();
  explicit ProductsScope(F32Products products) { tisa::model::set_f32_products(products); }
  ~ProductsScope() { tisa::model::set_f32_products(previous); }
};

#define SKIP_WITHOUT_ONEDNN()                                                                          \
  if (!tisa::model::onednn_sgemm_built())                                                              \
  GTEST_SKIP() << "this build has no oneDNN sgemm (LibTorch does not link the system's oneDNN, or no " \
                  "libdnnl-dev): float32 linear layers run on LibTorch's BLAS"

struct LinearPass {
  torch::Tensor y, dx, dw, db;
};

// y = linear(x, w, b) and the gradients of a weighted sum of y (every output its own weight).
LinearPass linear_pass(const torch::Tensor& x0, const torch::Tensor& w0, const torch::Tensor& b0, bool reference) {
  auto x = x0.detach().clone().requires_grad_(true);
  auto w = w0.detach().clone().requires_grad_(true);
  auto b = b0.defined() ? b0.detach().clone().requires_grad_(true) : torch::Tensor();
  auto y = reference ? torch::linear(x, w, b) : tisa::model::linear(x, w, b);
  // The layer writes only its output: not its input, weight or bias (one row once added into the bias).
  EXPECT_TRUE(torch::equal(x.detach(), x0.to(x.scalar_type())));
  EXPECT_TRUE(torch::equal(w.detach(), w0.to(w.scalar_type())));
  if (b.defined()) {
    EXPECT_TRUE(torch::equal(b.detach(), b0.to(b.scalar_type())));
  }
  torch::manual_seed(99);
  auto weights = torch::rand(y.sizes()).to(y.scalar_type());  // positive: sums without cancellation
  (y * weights).sum().backward();
  return {y.detach(), x.grad(), w.grad(), b.defined() ? b.grad() : torch::Tensor()};
}

// |got − ref| within `rel` of ref's norm, plus `floor` for tensors that are zero in exact arithmetic
// (the key bias's gradient: a constant per query row, which the softmax ignores).
void expect_close(const torch::Tensor& got, const torch::Tensor& ref, double rel, const std::string& what,
                  double floor = 0.0) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.sizes(), ref.sizes()) << what;
  EXPECT_EQ(got.scalar_type(), torch::kFloat) << what;
  const double size = ref.to(torch::kDouble).norm().item<double>();
  const double error = (got.to(torch::kDouble) - ref.to(torch::kDouble)).norm().item<double>();
  EXPECT_LE(error, rel * size + floor) << what << ": error " << error << ", norm " << size;
}

struct Shape {
  std::vector<int64_t> x;  // input sizes, the last one `in`
  int64_t out;
  bool bias;
};

const std::vector<Shape> kShapes = {
    {{7, 5}, 3, true},  {{1, 1}, 1, true},       {{37, 128}, 130, false},
    {{2, 9, 16}, 24, true}, {{4096, 128}, 384, true}, {{300, 512}, 128, true},
};

TEST(CpuLinear, OneDnnEqualsTheLayerInDouble) {
  SKIP_WITHOUT_ONEDNN();
  ProductsScope scope(F32Products::kOneDnn);
  for (const auto& s : kShapes) {
    torch::manual_seed(s.out + s.x.back());
    auto x = torch::randn(s.x), w = torch::randn({s.out, s.x.back()}) * 0.1;
    auto b = s.bias ? torch::randn({s.out}) : torch::Tensor();
    const auto got = linear_pass(x, w, b, false);
    const auto ref = linear_pass(x.to(torch::kDouble), w.to(torch::kDouble), s.bias ? b.to(torch::kDouble) : b, true);
    const std::string what = "x " + c10::str(x.sizes()) + " out " + std::to_string(s.out);
    expect_close(got.y, ref.y, 1e-6, what + " y");
    expect_close(got.dx, ref.dx, 1e-6, what + " dx");
    expect_close(got.dw, ref.dw, 1e-6, what + " dw");
    if (s.bias) expect_close(got.db, ref.db, 1e-6, what + " db");
    else EXPECT_FALSE(got.db.defined());
  }
}

// Strided inputs (a transposed view, an expanded bias) give what their contiguous copies give.
TEST(CpuLinear, OneDnnTakesStridedInputs) {
  SKIP_WITHOUT_ONEDNN();
  ProductsScope scope(F32Products::kOneDnn);
  torch::manual_seed(2);
  auto x = torch::randn({16, 40}).t();  // [40, 16], column-major
  auto w = torch::randn({16, 12}).t();  // [12, 16]
  auto b = torch::randn({1}).expand({12});
  const auto got = linear_pass(x, w, b, false);
  const auto ref = linear_pass(x.contiguous(), w.contiguous(), b.contiguous(), false);
  EXPECT_TRUE(torch::equal(got.y, ref.y));
  EXPECT_TRUE(torch::equal(got.dx, ref.dx));
  EXPECT_TRUE(torch::equal(got.dw, ref.dw));
  EXPECT_TRUE(torch::equal(got.db, ref.db));
}

// The two libraries sum in different orders: equal to float rounding, not bitwise.
TEST(CpuLinear, OneDnnAndBlasAgreeToFloatRounding) {
  SKIP_WITHOUT_ONEDNN();
  for (const auto& s : kShapes) {
    torch::manual_seed(7 + s.out);
    auto x = torch::randn(s.x), w = torch::randn({s.out, s.x.back()}) * 0.1;
    auto b = s.bias ? torch::randn({s.out}) : torch::Tensor();
    LinearPass onednn, blas;
    {
      ProductsScope scope(F32Products::kOneDnn);
      onednn = linear_pass(x, w, b, false);
    }
    {
      ProductsScope scope(F32Products::kBlas);
      blas = linear_pass(x, w, b, false);
    }
    const std::string what = "x " + c10::str(x.sizes());
    expect_close(onednn.y, blas.y, 1e-6, what + " y");
    expect_close(onednn.dx, blas.dx, 1e-6, what + " dx");
    expect_close(onednn.dw, blas.dw, 1e-6, what + " dw");
  }
}

TEST(CpuLinear, SameBitsRunToRunAtOneAndTwoThreads) {
  SKIP_WITHOUT_ONEDNN();
  ProductsScope scope(F32Products::kOneDnn);
  const int threads = at::get_num_threads();
  torch::manual_seed(5);
  auto x = torch::randn({1000, 128}), w = torch::randn({512, 128}), b = torch::randn({512});
  for (int n : {1, 2}) {
    at::set_num_threads(n);
    const auto first = linear_pass(x, w, b, false);
    const auto second = linear_pass(x, w, b, false);
    EXPECT_TRUE(torch::equal(first.y, second.y)) << n << " threads";
    EXPECT_TRUE(torch::equal(first.dx, second.dx)) << n << " threads";
    EXPECT_TRUE(torch::equal(first.dw, second.dw)) << n << " threads";
  }
  at::set_num_threads(threads);
}

// Only the gradients asked for: a frozen weight, an input without gradient.
TEST(CpuLinear, OnlyTheGradientsAskedFor) {
  SKIP_WITHOUT_ONEDNN();
  ProductsScope scope(F32Products::kOneDnn);
  torch::manual_seed(6);
  auto x = torch::randn({8, 6}, torch::requires_grad());
  auto w = torch::randn({4, 6});
  auto b = torch::randn({4}, torch::requires_grad());
  tisa::model::linear(x, w, b).sum().backward();
  EXPECT_TRUE(x.grad().defined());
  EXPECT_TRUE(b.grad().defined());
  EXPECT_TRUE(torch::allclose(b.grad(), torch::full({4}, 8.0f)));
  auto x2 = torch::randn({8, 6});
  auto w2 = torch::randn({4, 6}, torch::requires_grad());
  tisa::model::linear(x2, w2, torch::Tensor()).sum().backward();
  EXPECT_TRUE(torch::allclose(w2.grad(), x2.sum(0).expand({4, 6}), 1e-5, 1e-5));
}

// Under autocast, and for other dtypes, the layer is at::linear's: the same bits.
TEST(CpuLinear, AutocastAndOtherDtypesAreAtLinear) {
  ProductsScope scope(tisa::model::onednn_sgemm_built() ? F32Products::kOneDnn : F32Products::kBlas);
  torch::manual_seed(8);
  auto x = torch::randn({2, 5, 16}), w = torch::randn({8, 16}), b = torch::randn({8});
  {
    tisa::model::AutocastScope autocast(torch::kCPU, true);
    const auto got = tisa::model::linear(x, w, b);
    const auto ref = torch::linear(x.reshape({10, 16}), w, b).view({2, 5, 8});
    EXPECT_EQ(got.scalar_type(), torch::kBFloat16);
    EXPECT_TRUE(torch::equal(got, ref));
  }
  const auto xd = x.to(torch::kDouble), wd = w.to(torch::kDouble), bd = b.to(torch::kDouble);
  EXPECT_TRUE(torch::equal(tisa::model::linear(xd, wd, bd), torch::linear(xd, wd, bd)));
}

TEST(CpuLinear, TheRuleFollowsTheBuildAndTheCpu) {
  const F32Products previous = tisa::model::f32_products();
  tisa::model::set_f32_products(F32Products::kAuto);
#if TISA_HAVE_AVX512_KERNELS
  const bool avx512 = tisa::avx512::cpu_has_avx512();
#else
  const bool avx512 = false;
#endif
  EXPECT_EQ(tisa::model::f32_products(),
            tisa::model::onednn_sgemm_built() && avx512 ? F32Products::kOneDnn : F32Products::kBlas);
  EXPECT_FALSE(tisa::model::f32_products_description().empty());
  tisa::model::set_f32_products(F32Products::kBlas);
  EXPECT_EQ(tisa::model::f32_products(), F32Products::kBlas);
  if (!tisa::model::onednn_sgemm_built()) {
    EXPECT_THROW(tisa::model::set_f32_products(F32Products::kOneDnn), tisa::Error);
  }
  for (auto p : {F32Products::kAuto, F32Products::kBlas, F32Products::kOneDnn})
    EXPECT_EQ(tisa::model::f32_products_from_name(tisa::model::f32_products_name(p)), p);
  try {
    tisa::model::f32_products_from_name("mkl");
    ADD_FAILURE() << "an unknown name was taken";
  } catch (const tisa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("auto, blas or onednn"), std::string::npos) << e.what();
  }
  tisa::model::set_f32_products(previous);
}

// The fp32 model on either library: the pretraining heads and every parameter's gradient agree
// to float rounding, for a scheme with a bias (TISA) and one with value terms (Shaw).
TEST(CpuLinear, TheModelOnOneDnnEqualsTheModelOnBlas) {
  SKIP_WITHOUT_ONEDNN();
  for (const std::string scheme : {"tisa", "shaw"}) {
    torch::manual_seed(21);
    tisa::model::AlbertForPreTraining model(tisa::test::tiny_model({scheme, true, scheme, ""}));
    model->train();
    torch::manual_seed(22);
    const auto ids = torch::randint(5, 50, {3, 11}, torch::kLong);
    const auto mask = torch::ones({3, 11}, torch::kLong);
    const auto masked = torch::tensor(std::vector<int64_t>{1, 4, 13, 30});
    std::map<std::string, torch::Tensor> grads[2];
    torch::Tensor logits[2];
    for (int i = 0; i < 2; ++i) {
      ProductsScope scope(i == 0 ? F32Products::kOneDnn : F32Products::kBlas);
      model->zero_grad();
      torch::manual_seed(23);  // the same dropout masks
      auto out = model->forward(ids, torch::Tensor(), mask, masked, {});
      auto w = torch::linspace(-1, 1, out.prediction_logits.numel()).view(out.prediction_logits.sizes());
      ((out.prediction_logits * w).sum() + out.sop_logits.pow(2).sum()).backward();
      logits[i] = out.prediction_logits.detach().clone();
      for (const auto& p : model->named_parameters())
        if (p.value().grad().defined()) grads[i][p.key()] = p.value().grad().clone();
    }
    expect_close(logits[0], logits[1], 1e-6, scheme + " logits");
    ASSERT_EQ(grads[0].size(), grads[1].size());
    ASSERT_GT(grads[0].size(), 5u);
    for (const auto& [name, g] : grads[1]) expect_close(grads[0].at(name), g, 2e-6, scheme + " grad " + name, 1e-9);
  }
}

}  // namespace
