// tisa-train's CPU attention kernel (model/cpu_attention.h) against attention computed in double
// from the same bf16 or float32 inputs, in values and in the gradients of q, k, v and the bias; on
// its vectorised paths (AVX512_BF16, AVX-512 FMAs) and its scalar loops; bitwise the same at 1 and
// 2 threads; with only some query rows, equal to those rows of the full attention; and inside the model, per position scheme, at least as accurate as the eager bf16
// attention it replaces, and equal to the eager float32 attention to float rounding.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/albert.h"
#include "model/attention_kernels.h"
#include "model/autocast.h"
#include "model/cpu_attention.h"
#include "model/fused_attention.h"
#include "scheme_variants.h"

namespace {

using tisa::model::AttentionBackend;
namespace kernels = tisa::model::kernels;

// Runs the scalar loop for its lifetime.
struct ScalarKernels {
  ScalarKernels() { kernels::attention_force_scalar(true); }
  ~ScalarKernels() { kernels::attention_force_scalar(false); }
};

struct Case {
  int64_t B, H, L, d;
  std::string bias;  // "none", "heads" [1, H, L, L], "full" [B, H, L, L], "rows" [H, 1, L]
  bool padding;
  torch::ScalarType dtype = torch::kBFloat16;  // of q, k, v and the output gradient
};

struct Outputs {
  torch::Tensor out, dq, dk, dv, dbias;
};

// The inputs of one case: q, k, v in the case's dtype (as strided views of [B, L, H, d], as the
// model makes them), a float bias and an additive key mask with padding at the end of every other row.
struct Inputs {
  torch::Tensor q, k, v, bias, mask, grad_out;
  explicit Inputs(const Case& c) {
    torch::manual_seed(static_cast<uint64_t>(c.L * 131 + c.d * 7 + c.B));
    auto heads = [&] { return torch::randn({c.B, c.L, c.H, c.d}).to(c.dtype).transpose(1, 2); };
    q = heads() * 2;  // logits of a few units: a softmax far from uniform
    k = heads();
    v = heads();
    if (c.bias == "heads") bias = torch::randn({1, c.H, c.L, c.L});
    if (c.bias == "full") bias = torch::randn({c.B, c.H, c.L, c.L});
    if (c.bias == "rows") bias = torch::randn({c.H, 1, c.L});
    mask = torch::zeros({c.B, 1, 1, c.L});
    if (c.padding)
      for (int64_t b = 1; b < c.B; b += 2) mask[b].narrow(-1, c.L / 2 + 1, c.L - c.L / 2 - 1).fill_(-1e30);
    grad_out = torch::randn({c.B, c.H, c.L, c.d}).to(c.dtype);
  }
};

Outputs run_kernel(const Inputs& in) {
  auto q = in.q.detach().requires_grad_(), k = in.k.detach().requires_grad_(), v = in.v.detach().requires_grad_();
  torch::Tensor bias;
  if (in.bias.defined()) bias = in.bias.detach().requires_grad_();
  auto out = tisa::model::cpu_attention(q, k, v, bias, in.mask);
  out.backward(in.grad_out);
  return {out.detach(), q.grad(), k.grad(), v.grad(), bias.defined() ? bias.grad() : torch::Tensor()};
}

// The same attention in double from the same inputs (bf16-rounded for bf16).
Outputs run_reference(const Inputs& in) {
  auto dbl = [](const torch::Tensor& t) { return t.detach().to(torch::kDouble).requires_grad_(); };
  auto q = dbl(in.q), k = dbl(in.k), v = dbl(in.v);
  torch::Tensor bias;
  auto logits = torch::matmul(q, k.transpose(-1, -2)) / std::sqrt(static_cast<double>(q.size(-1)));
  if (in.bias.defined()) {
    bias = dbl(in.bias);
    logits = logits + bias;
  }
  auto out = torch::matmul(torch::softmax(logits + in.mask.to(torch::kDouble), -1), v);
  out.backward(in.grad_out.to(torch::kDouble));
  return {out.detach(), q.grad(), k.grad(), v.grad(), bias.defined() ? bias.grad() : torch::Tensor()};
}

// ‖a − ref‖ / ‖ref‖ over the whole tensor.
double relative_error(const torch::Tensor& a, const torch::Tensor& ref) {
  const auto r = ref.to(torch::kDouble);
  return (a.to(torch::kDouble) - r).norm().item<double>() / std::max(r.norm().item<double>(), 1e-30);
}

void expect_close_to_reference(const Case& c, const std::string& path) {
  const Inputs in(c);
  const auto got = run_kernel(in);
  const auto ref = run_reference(in);
  const std::string what = path + " B" + std::to_string(c.B) + " H" + std::to_string(c.H) + " L" + std::to_string(c.L) +
                           " d" + std::to_string(c.d) + " bias " + c.bias + (c.padding ? " padded" : "");
  ASSERT_EQ(got.out.sizes(), ref.out.sizes()) << what;
  ASSERT_EQ(got.out.scalar_type(), c.dtype) << what;
  ASSERT_EQ(got.dq.scalar_type(), c.dtype) << what;
  // bf16 keeps 8 bits: P and dS are rounded to it before their products, the outputs after.
  // float32 keeps 24: sums of up to L terms of float rounding.
  const bool bf16 = c.dtype == torch::kBFloat16;
  const double out_tol = bf16 ? 6e-3 : 1e-5, grad_tol = bf16 ? 1.5e-2 : 2e-5;
  EXPECT_LT(relative_error(got.out, ref.out), out_tol) << what << " output";
  EXPECT_LT(relative_error(got.dq, ref.dq), grad_tol) << what << " dq";
  EXPECT_LT(relative_error(got.dk, ref.dk), grad_tol) << what << " dk";
  EXPECT_LT(relative_error(got.dv, ref.dv), out_tol) << what << " dv";
  ASSERT_EQ(got.dbias.defined(), ref.dbias.defined()) << what;
  if (got.dbias.defined()) {
    EXPECT_EQ(got.dbias.sizes(), in.bias.sizes()) << what;
    EXPECT_EQ(got.dbias.scalar_type(), torch::kFloat) << what;
    EXPECT_LT(relative_error(got.dbias, ref.dbias), bf16 ? 1e-2 : 2e-5) << what << " dbias";
  }
  EXPECT_TRUE(torch::isfinite(got.out).all().item<bool>()) << what;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all{
      {2, 4, 128, 32, "heads", true},  // the research-scale recipe's head
      {2, 3, 37, 32, "heads", true},   // L not a multiple of 16, odd
      {1, 2, 128, 64, "none", false},  // albert-base's head size, no position term
      {3, 2, 16, 8, "full", true},     // a bias per sequence (Shaw's keys-only term)
      {2, 2, 5, 2, "rows", true},      // tiny and odd; a bias broadcast over query rows
      {1, 1, 70, 96, "heads", false},  // d a multiple of 16 but not of 64; L past four column blocks
  };
  return all;
}

// One path of the kernels: bf16 or float32, vectorised or the scalar loop.
struct KernelPath {
  torch::ScalarType dtype;
  bool scalar;
};

class CpuAttentionPath : public ::testing::TestWithParam<KernelPath> {};

TEST_P(CpuAttentionPath, MatchesDoublePrecision) {
  const auto [dtype, scalar] = GetParam();
  const bool bf16 = dtype == torch::kBFloat16;
  if (!scalar && !kernels::attention_vectorised(bf16))
    GTEST_SKIP() << "this CPU has no " << (bf16 ? "AVX512_BF16" : "AVX-512") << ": the scalar loop only";
  std::optional<ScalarKernels> scalar_kernels;
  if (scalar) scalar_kernels.emplace();
  std::vector<Case> all = cases();
  if (!bf16) all.push_back({2, 2, 19, 5, "heads", true});  // an odd head size: float32 needs no pairs
  for (auto& c : all) {
    c.dtype = dtype;
    expect_close_to_reference(c, std::string(scalar ? "scalar " : "vectorised ") + c10::toString(dtype));
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, CpuAttentionPath,
                         ::testing::Values(KernelPath{torch::kBFloat16, true}, KernelPath{torch::kBFloat16, false},
                                           KernelPath{torch::kFloat, true}, KernelPath{torch::kFloat, false}),
                         [](const auto& info) {
                           return std::string(info.param.dtype == torch::kFloat ? "Float32" : "Bf16") +
                                  (info.param.scalar ? "ScalarLoop" : "Vectorised");
                         });

TEST(CpuAttention, SameBitsAtOneAndTwoThreads) {
  for (const auto dtype : {torch::kBFloat16, torch::kFloat}) {
    const Inputs in({4, 4, 64, 32, "heads", true, dtype});
    const int before = at::get_num_threads();
    at::set_num_threads(1);
    const auto one = run_kernel(in);
    at::set_num_threads(2);
    const auto two = run_kernel(in);
    at::set_num_threads(before);
    EXPECT_TRUE(torch::equal(one.out, two.out)) << dtype;
    EXPECT_TRUE(torch::equal(one.dq, two.dq)) << dtype;
    EXPECT_TRUE(torch::equal(one.dk, two.dk)) << dtype;
    EXPECT_TRUE(torch::equal(one.dv, two.dv)) << dtype;
    EXPECT_TRUE(torch::equal(one.dbias, two.dbias)) << dtype;
  }
}

// The offset terms (Shaw's through the kernel): logits by offset E and the probabilities summed
// by offset B, for windows 0 (one bucket), short (edge buckets of many keys) and L − 1 (no
// clipping), beside a per-head bias: B, the context and the gradients of q, k, v, E and the bias
// against the same sums in double, on both paths, with padding.
TEST(CpuAttention, OffsetTermsMatchDoublePrecision) {
  for (const auto dtype : {torch::kBFloat16, torch::kFloat}) {
    for (const bool scalar : {false, true}) {
      std::optional<ScalarKernels> force;
      if (scalar) force.emplace();
      const Case c{3, 2, 13, 8, "heads", true, dtype};
      const Inputs in(c);
      for (const int64_t w : {int64_t{0}, int64_t{3}, c.L - 1}) {
        SCOPED_TRACE(std::string(c10::toString(dtype)) + (scalar ? " scalar" : " vectorised") + ", window " +
                     std::to_string(w));
        torch::manual_seed(static_cast<uint64_t>(w + 5));
        const auto offset_logits = torch::randn({c.B, c.H, c.L, 2 * w + 1});
        const auto grad_buckets = torch::randn({c.B, c.H, c.L, 2 * w + 1});
        auto q = in.q.detach().requires_grad_(), k = in.k.detach().requires_grad_(),
             v = in.v.detach().requires_grad_(), e = offset_logits.clone().requires_grad_(),
             bias = in.bias.detach().requires_grad_();
        auto got = tisa::model::cpu_attention_with_offsets(q, k, v, bias, in.mask, {w, e, true});
        ASSERT_EQ(got.buckets.sizes(), (torch::IntArrayRef{c.B, c.H, c.L, 2 * w + 1}));
        torch::autograd::backward({got.context, got.buckets}, {in.grad_out, grad_buckets});

        auto dbl = [](const torch::Tensor& t) { return t.detach().to(torch::kDouble).requires_grad_(); };
        auto rq = dbl(in.q), rk = dbl(in.k), rv = dbl(in.v), re = dbl(offset_logits), rbias = dbl(in.bias);
        auto pos = torch::arange(c.L);
        auto index = ((pos.unsqueeze(0) - pos.unsqueeze(1)).clamp(-w, w) + w).expand({c.B, c.H, c.L, c.L});
        auto logits = torch::matmul(rq, rk.transpose(-1, -2)) / std::sqrt(8.0) + rbias + re.gather(-1, index) +
                      in.mask.to(torch::kDouble).clamp_min(-1e4);
        auto probs = torch::softmax(logits, -1);
        auto buckets = torch::zeros({c.B, c.H, c.L, 2 * w + 1}, torch::kDouble).scatter_add(-1, index, probs);
        auto out = torch::matmul(probs, rv);
        torch::autograd::backward({out, buckets}, {in.grad_out.to(torch::kDouble), grad_buckets.to(torch::kDouble)});

        const double tol = dtype == torch::kFloat ? 2e-5 : 2e-2;
        auto expect_close = [&](const torch::Tensor& a, const torch::Tensor& ref, const char* what) {
          ASSERT_TRUE(a.defined()) << what;
          const double error = (a.to(torch::kDouble) - ref).norm().item<double>();
          EXPECT_LE(error, tol * ref.norm().item<double>() + 1e-6) << what;
        };
        expect_close(got.buckets, buckets.detach(), "buckets");
        expect_close(got.context, out.detach(), "context");
        expect_close(q.grad(), rq.grad(), "dq");
        expect_close(k.grad(), rk.grad(), "dk");
        expect_close(v.grad(), rv.grad(), "dv");
        expect_close(bias.grad(), rbias.grad(), "d bias");
        if (w > 0) {
          expect_close(e.grad(), re.grad(), "d offset logits");
        } else {  // one bucket shifts a whole row, which the softmax ignores: 0 up to rounding
          EXPECT_LE(e.grad().norm().item<double>(), tol * rbias.grad().norm().item<double>()) << "d offset logits";
        }
      }
    }
  }
}

// Only some query rows (the sparse final layer's): rows at positions that repeat and come in any
// order, with a per-head or per-sequence bias, with and without Shaw's offset terms, equal the
// same rows of the attention over every query, in the context, the buckets and the gradients of
// the full q, k, v, the bias and the offset logits; both dtypes, both paths.
TEST(CpuAttention, QueryRowsEqualTheRowsOfTheFullAttention) {
  const auto positions = torch::tensor({0, 5, 12, 5, 0, 0, 0, 0, 7, 1, 0, 11}, torch::kLong).view({3, 4});
  auto rows_of = [&](const torch::Tensor& t) {  // [B, H, L, n] → [B, H, 4, n] at the positions
    return t.gather(2, positions.view({3, 1, 4, 1}).expand({3, t.size(1), 4, t.size(3)}));
  };
  for (const auto dtype : {torch::kBFloat16, torch::kFloat}) {
    for (const bool scalar : {false, true}) {
      if (!scalar && !kernels::attention_vectorised(dtype == torch::kBFloat16)) continue;
      std::optional<ScalarKernels> force;
      if (scalar) force.emplace();
      for (const std::string bias_kind : {"heads", "full"}) {
        for (const int64_t w : {int64_t{-1}, int64_t{3}}) {
          SCOPED_TRACE(std::string(c10::toString(dtype)) + (scalar ? " scalar" : " vectorised") + ", bias " +
                       bias_kind + ", window " + std::to_string(w));
          const Case c{3, 2, 13, 8, bias_kind, true, dtype};
          const Inputs in(c);
          torch::manual_seed(3);
          const auto offset_logits = w >= 0 ? torch::randn({c.B, c.H, c.L, 2 * w + 1}) : torch::Tensor();
          const auto grad_rows = torch::randn({c.B, c.H, 4, c.d}).to(dtype);
          const auto grad_buckets = w >= 0 ? torch::randn({c.B, c.H, 4, 2 * w + 1}) : torch::Tensor();
          struct Run {
            torch::Tensor context, buckets, dq, dk, dv, dbias, de;
          };
          auto run = [&](bool query_rows) {
            auto q = in.q.detach().requires_grad_(), k = in.k.detach().requires_grad_(),
                 v = in.v.detach().requires_grad_(), bias = in.bias.detach().requires_grad_();
            torch::Tensor e = w >= 0 ? offset_logits.clone().requires_grad_() : torch::Tensor();
            const auto pick = [&](const torch::Tensor& t) { return query_rows && t.defined() ? rows_of(t) : t; };
            const auto at = query_rows ? positions : torch::Tensor();
            torch::Tensor context, buckets;
            if (w >= 0) {
              auto got = tisa::model::cpu_attention_with_offsets(pick(q), k, v, bias, in.mask, {w, pick(e), true}, at);
              context = got.context;
              buckets = got.buckets;
            } else {
              context = tisa::model::cpu_attention(pick(q), k, v, bias, in.mask, at);
            }
            if (!query_rows) {  // the same rows of the full attention
              context = rows_of(context);
              if (buckets.defined()) buckets = rows_of(buckets);
            }
            auto loss = (context.to(torch::kFloat) * grad_rows.to(torch::kFloat)).sum();
            if (buckets.defined()) loss = loss + (buckets * grad_buckets).sum();
            loss.backward();
            return Run{context.detach(), buckets.defined() ? buckets.detach() : torch::Tensor(), q.grad(), k.grad(),
                       v.grad(), bias.grad(), e.defined() ? e.grad() : torch::Tensor()};
          };
          const Run full = run(false), rows = run(true);
          const double tol = dtype == torch::kFloat ? 1e-5 : 1e-2;
          auto expect_close = [&](const torch::Tensor& a, const torch::Tensor& ref, const char* what) {
            ASSERT_TRUE(a.defined() && ref.defined()) << what;
            ASSERT_EQ(a.sizes(), ref.sizes()) << what;
            EXPECT_LE(relative_error(a, ref), tol) << what;
          };
          expect_close(rows.context, full.context, "context");
          expect_close(rows.dq, full.dq, "dq");
          expect_close(rows.dk, full.dk, "dk");
          expect_close(rows.dv, full.dv, "dv");
          expect_close(rows.dbias, full.dbias, "d bias");
          if (w >= 0) {
            expect_close(rows.buckets, full.buckets, "buckets");
            expect_close(rows.de, full.de, "d offset logits");
          }
          // Position 2 of sequence 0 is asked for by no row: its q and bias rows get no gradient.
          EXPECT_EQ(rows.dq[0].select(1, 2).abs().max().item<float>(), 0.0f);
        }
      }
    }
  }
}

TEST(CpuAttention, RejectsQueryPositionsThatDoNotFit) {
  const auto k = torch::randn({2, 2, 8, 4});
  const auto q = torch::randn({2, 2, 3, 4});
  const auto ok = torch::zeros({2, 3}, torch::kLong);
  EXPECT_NO_THROW(tisa::model::cpu_attention(q, k, k, {}, {}, ok));
  EXPECT_THROW(tisa::model::cpu_attention(q, k, k, {}, {}, torch::full({2, 3}, 8, torch::kLong)), c10::Error);
  EXPECT_THROW(tisa::model::cpu_attention(q, k, k, {}, {}, torch::full({2, 3}, -1, torch::kLong)), c10::Error);
  EXPECT_THROW(tisa::model::cpu_attention(q, k, k, {}, {}, torch::zeros({2, 4}, torch::kLong)), c10::Error);
  EXPECT_THROW(tisa::model::cpu_attention(q, k, k, {}, {}, torch::zeros({2, 3}, torch::kInt)), c10::Error);
  EXPECT_THROW(tisa::model::cpu_attention(q, k, k, {}, {}), c10::Error);  // Lq ≠ L without positions
  const auto nine = torch::randn({2, 2, 9, 4});  // more query rows than positions
  EXPECT_THROW(tisa::model::cpu_attention(nine, k, k, {}, {}, torch::zeros({2, 9}, torch::kLong)), c10::Error);
}

TEST(CpuAttention, RejectsWhatItDoesNotCompute) {
  auto q = torch::randn({1, 2, 8, 4}).to(torch::kBFloat16);
  EXPECT_TRUE(tisa::model::cpu_attention_supports(q));
  EXPECT_TRUE(tisa::model::cpu_attention_supports(q.to(torch::kFloat)));
  EXPECT_FALSE(tisa::model::cpu_attention_supports(q.to(torch::kDouble)));
  EXPECT_FALSE(tisa::model::cpu_attention_supports(torch::randn({1, 2, 8, 3}).to(torch::kBFloat16)));  // odd d
  EXPECT_TRUE(tisa::model::cpu_attention_supports(torch::randn({1, 2, 8, 3})));  // float32 takes odd d
  EXPECT_THROW(tisa::model::cpu_attention(q.to(torch::kFloat), q, q, {}, {}), c10::Error);  // mixed dtypes
  EXPECT_THROW(tisa::model::cpu_attention(q, q, q, torch::zeros({3, 8, 8}), {}), c10::Error);  // 3 heads of 2
}

// Inside the model under bf16 autocast, per position scheme: outputs and every parameter's
// gradient at least as close to the float32 eager model as the eager bf16 attention is.
class CpuAttentionInModel : public ::testing::TestWithParam<tisa::test::SchemeVariant> {
 protected:
  // The parameter's tiny model (heads of 8, training mode) with the CPU kernel selected, which every
  // scheme takes (Shaw's value term through the probabilities summed by offset).
  tisa::model::AlbertForPreTraining model_on_the_kernel(torch::ScalarType dtype) {
    const auto& variant = GetParam();
    torch::manual_seed(11);
    auto config = tisa::test::tiny_model(variant);
    config.hidden_size = 32;  // heads of 8
    tisa::model::AlbertForPreTraining model(config);
    model->train();
    auto& attention = *model->albert->encoder->groups[0]->layers[0]->attention;
    const auto* scheme = model->albert->encoder->scheme_for(0, 0);
    tisa::model::set_attention_backend(*model, AttentionBackend::kCpuKernel);
    EXPECT_TRUE(attention.uses_cpu_kernel(scheme, false, torch::empty({1, 4, 11, 8}, dtype))) << variant.name;
    return model;
  }
};

TEST_P(CpuAttentionInModel, AsAccurateAsTheEagerBf16Attention) {
  const auto& variant = GetParam();
  auto model = model_on_the_kernel(torch::kBFloat16);
  const auto reference = tisa::test::forward_backward(model, AttentionBackend::kEager, torch::kCPU);
  auto in_bf16 = [&](AttentionBackend backend) {
    tisa::model::AutocastScope autocast(torch::kCPU, true);
    return tisa::test::forward_backward(model, backend, torch::kCPU);
  };
  const auto eager = in_bf16(AttentionBackend::kEager);
  const auto kernel = in_bf16(AttentionBackend::kCpuKernel);
  // Per tensor: the kernel's error within 3× the eager bf16 error plus 2 % of the tensor (its
  // rounding differs: float32 logits, one bf16 rounding of P instead of three of the logits).
  // Over all of them together (a single draw, so a margin): within 2× the eager error.
  double sum_kernel = 0, sum_eager = 0, sum_ref = 0;
  auto check = [&](const torch::Tensor& got, const torch::Tensor& eager_value, const torch::Tensor& ref,
                   const std::string& what) {
    const auto r = ref.to(torch::kDouble);
    const double e_kernel = (got.to(torch::kDouble) - r).norm().item<double>();
    const double e_eager = (eager_value.to(torch::kDouble) - r).norm().item<double>();
    const double size = r.norm().item<double>();
    // A tensor smaller than the eager path's error is zero in exact arithmetic (FIRE's output bias
    // moves every logit of a row alike, which the softmax ignores): rounding in both, within 10×.
    const double bound = size < e_eager ? 10 * e_eager : 3 * e_eager + 0.02 * size;
    EXPECT_LE(e_kernel, bound) << variant.name << " " << what << ": kernel error " << e_kernel << ", eager bf16 "
                               << e_eager << ", norm " << size;
    sum_kernel += e_kernel * e_kernel, sum_eager += e_eager * e_eager, sum_ref += size * size;
  };
  check(kernel.hidden, eager.hidden, reference.hidden, "hidden");
  check(kernel.sop, eager.sop, reference.sop, "sop logits");
  ASSERT_EQ(kernel.grads.size(), reference.grads.size()) << variant.name;
  for (const auto& [name, g] : reference.grads) {
    ASSERT_TRUE(kernel.grads.count(name)) << variant.name << " " << name;
    check(kernel.grads.at(name), eager.grads.at(name), g, "grad " + name);
  }
  EXPECT_LE(std::sqrt(sum_kernel / sum_ref), 2 * std::sqrt(sum_eager / sum_ref) + 1e-3)
      << variant.name << ": over every output and gradient";
}

// In float32, per position scheme: outputs and every parameter's gradient equal to the eager
// float32 model's to float rounding (the kernel sums in another order).
TEST_P(CpuAttentionInModel, Float32EqualsTheEagerFloat32Attention) {
  const auto& variant = GetParam();
  auto model = model_on_the_kernel(torch::kFloat);
  const auto eager = tisa::test::forward_backward(model, AttentionBackend::kEager, torch::kCPU);
  const auto kernel = tisa::test::forward_backward(model, AttentionBackend::kCpuKernel, torch::kCPU);
  auto check = [&](const torch::Tensor& got, const torch::Tensor& ref, const std::string& what) {
    ASSERT_EQ(got.scalar_type(), torch::kFloat) << variant.name << " " << what;
    const double size = ref.to(torch::kDouble).norm().item<double>();
    const double error = (got.to(torch::kDouble) - ref.to(torch::kDouble)).norm().item<double>();
    EXPECT_LE(error, 1e-5 * size + 1e-7) << variant.name << " " << what << ": error " << error << ", norm " << size;
  };
  check(kernel.hidden, eager.hidden, "hidden");
  check(kernel.sop, eager.sop, "sop logits");
  ASSERT_EQ(kernel.grads.size(), eager.grads.size()) << variant.name;
  for (const auto& [name, g] : eager.grads) {
    ASSERT_TRUE(kernel.grads.count(name)) << variant.name << " " << name;
    check(kernel.grads.at(name), g, "grad " + name);
  }
}

INSTANTIATE_TEST_SUITE_P(Schemes, CpuAttentionInModel, ::testing::ValuesIn(tisa::test::scheme_variants()),
                         [](const auto& info) { return tisa::test::variant_test_name(info.param); });

TEST(CpuAttentionChoice, AutoTakesTheKernelWhereItRunsVectorised) {
  tisa::model::AlbertModel model(tisa::test::tiny_model({"tisa", false, "tisa", ""}));
  auto& attention = *model->encoder->groups[0]->layers[0]->attention;
  const auto* scheme = model->encoder->scheme_for(0, 0);
  const auto bf16 = torch::empty({1, 4, 11, 4}, torch::kBFloat16);
  EXPECT_EQ(attention.uses_cpu_kernel(scheme, false, bf16), tisa::model::cpu_attention_native(torch::kBFloat16));
  EXPECT_EQ(attention.uses_cpu_kernel(scheme, false, bf16.to(torch::kFloat)),
            tisa::model::cpu_attention_native(torch::kFloat));
  EXPECT_FALSE(attention.uses_cpu_kernel(scheme, false, bf16.to(torch::kDouble))) << "double stays on ATen";
  EXPECT_FALSE(attention.uses_cpu_kernel(scheme, /*probs_requested=*/true, bf16)) << "probabilities need eager";
  tisa::model::set_attention_backend(*model, AttentionBackend::kEager);
  EXPECT_FALSE(attention.uses_cpu_kernel(scheme, false, bf16));
  tisa::model::set_attention_backend(*model, AttentionBackend::kCpuKernel);
  EXPECT_TRUE(attention.uses_cpu_kernel(scheme, false, bf16));
  attention.attention_dropout->options.p(0.1);
  EXPECT_FALSE(attention.uses_cpu_kernel(scheme, false, bf16)) << "dropout on the probabilities stays on ATen";
  attention.eval();
  EXPECT_TRUE(attention.uses_cpu_kernel(scheme, false, bf16)) << "no dropout at evaluation";
}

}  // namespace

namespace {

// Not a test: the attention alone at the research-scale recipe's shape, forward + backward,
// the eager attention (as AlbertAttention computes it) and the kernel alternated, medians of
// 20 (run with --gtest_also_run_disabled_tests --gtest_filter='*CpuAttentionBench*').
void bench_recipe_shape(torch::ScalarType dtype) {
  const Case c{32, 4, 128, 32, "heads", true, dtype};
  const Inputs in(c);
  auto eager = [&] {
    auto q = in.q.detach().requires_grad_(), k = in.k.detach().requires_grad_(), v = in.v.detach().requires_grad_();
    auto bias = in.bias.detach().requires_grad_();
    auto logits = torch::matmul(q, k.transpose(-1, -2)) * (1.0 / std::sqrt(32.0));
    logits = logits + bias.to(dtype);
    logits = logits + tisa::model::finite_mask_for(in.mask, dtype).to(dtype);
    auto out = torch::matmul(torch::softmax(logits, -1), v);
    out.backward(in.grad_out);
  };
  auto kernel = [&] { run_kernel(in); };
  auto median_ms = [](const std::function<void()>& f) {
    std::vector<double> t;
    for (int i = 0; i < 23; ++i) {
      const auto start = std::chrono::steady_clock::now();
      f();
      if (i >= 3) t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  for (int round = 0; round < 3; ++round)
    std::printf("%s round %d: eager %.2f ms, kernel %.2f ms\n", c10::toString(dtype), round, median_ms(eager),
                median_ms(kernel));
}

TEST(CpuAttentionBench, DISABLED_RecipeShape) { bench_recipe_shape(torch::kBFloat16); }
TEST(CpuAttentionBench, DISABLED_RecipeShapeFloat32) { bench_recipe_shape(torch::kFloat); }

}  // namespace
