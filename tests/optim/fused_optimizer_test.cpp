// The fused CPU updates (fused_update.h) against the per-op reference path (fused = false): same
// parameters, moments and trust ratios to float tolerance over several steps, for every LAMB form
// and AdamW; bitwise the same run to run and at any thread count; tensors the kernel cannot take
// (non-contiguous gradients) go the reference way.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>

#include "optim/adamw.h"
#include "optim/fused_update.h"
#include "optim/lamb.h"

namespace {

using tisa::optim::NamedParams;
using tisa::optim::Optimizer;
using MakeOptimizer = std::function<std::unique_ptr<Optimizer>(NamedParams, bool fused)>;

// Shapes that exercise the kernel's cases: several chunks with a remainder, fewer elements than
// one vector of lanes, a 2-D weight, excluded tensors (decay and ratio off) and an all-zero tensor
// (both trust-ratio guards).
NamedParams make_params(uint64_t seed) {
  torch::manual_seed(seed);
  const std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
      {"encoder.big.weight", {3 * tisa::optim::fused::kChunk + 5}},
      {"encoder.dense.weight", {48, 40}},
      {"encoder.dense.bias", {40}},
      {"encoder.LayerNorm.weight", {7}},
      {"encoder.zero.weight", {33}},
  };
  NamedParams params;
  for (const auto& [name, shape] : shapes) {
    at::Tensor p = name == "encoder.zero.weight" ? torch::zeros(shape) : torch::randn(shape).mul_(0.05);
    params.emplace_back(name, p.requires_grad_(true));
  }
  return params;
}

NamedParams clone_params(const NamedParams& params) {
  NamedParams out;
  for (const auto& [name, p] : params) out.emplace_back(name, p.detach().clone().requires_grad_(true));
  return out;
}

// Gradients of step t, the same for every optimiser given the same seed; the zero tensor keeps a
// zero gradient (so its u is 0 too under ALBERT's LAMB).
void set_grads(Optimizer& opt, int t) {
  torch::manual_seed(1000 + t);
  for (const auto& [name, p] : opt.params()) {
    at::Tensor g = torch::randn(p.sizes()).mul_(1e-2);
    if (name == "encoder.zero.weight") g.zero_();
    p.mutable_grad() = g;
  }
}

void expect_close(const at::Tensor& got, const at::Tensor& ref, const std::string& what) {
  const double atol = 1e-7, rtol = 2e-6;  // ~2 float ulps at the weights' scale
  at::Tensor x = got.detach().to(at::kDouble), r = ref.detach().to(at::kDouble);
  const double worst = ((x - r).abs() - (atol + rtol * r.abs())).max().item<double>();
  EXPECT_LE(worst, 0.0) << what << ": max |diff| " << (x - r).abs().max().item<double>();
}

void expect_same_state(const Optimizer& a, const Optimizer& b, bool bitwise) {
  auto sa = a.state_dict(), sb = b.state_dict();
  for (size_t i = 0; i < a.params().size(); ++i) {
    const auto& name = a.params()[i].first;
    for (const auto& [what, x, y] : {std::tuple{"param ", a.params()[i].second, b.params()[i].second},
                                     std::tuple{"m ", sa.at("m." + name), sb.at("m." + name)},
                                     std::tuple{"v ", sa.at("v." + name), sb.at("v." + name)}}) {
      if (bitwise)
        EXPECT_TRUE(at::equal(x, y)) << what << name;
      else
        expect_close(x, y, what + name);
    }
  }
}

// Five steps of a fused and a reference optimiser from the same start; compared after each step.
void expect_fused_matches_reference(const MakeOptimizer& make) {
  NamedParams start = make_params(7);
  auto fused = make(clone_params(start), true);
  auto reference = make(clone_params(start), false);
  for (int t = 1; t <= 5; ++t) {
    SCOPED_TRACE("step " + std::to_string(t));
    set_grads(*fused, t);
    set_grads(*reference, t);
    fused->step(0.02);
    reference->step(0.02);
    expect_same_state(*fused, *reference, /*bitwise=*/false);
    auto* lamb_f = dynamic_cast<tisa::optim::Lamb*>(fused.get());
    auto* lamb_r = dynamic_cast<tisa::optim::Lamb*>(reference.get());
    if (lamb_f && lamb_r) {
      auto rf = lamb_f->last_trust_ratios(), rr = lamb_r->last_trust_ratios();
      ASSERT_EQ(rf.size(), rr.size());
      for (const auto& [name, r] : rr) expect_close(rf.at(name), r, "trust ratio " + name);
    }
  }
  // The updates moved the parameters (a kernel that did nothing would match nothing above, but
  // say it plainly).
  EXPECT_FALSE(at::equal(fused->params()[0].second, start[0].second));
}

MakeOptimizer lamb(bool bias_correction, bool ratio_all) {
  return [=](NamedParams p, bool fused) -> std::unique_ptr<Optimizer> {
    tisa::optim::LambOptions o;
    o.bias_correction = bias_correction;
    o.trust_ratio_all = ratio_all;
    o.fused = fused;
    return std::make_unique<tisa::optim::Lamb>(std::move(p), o);
  };
}

MakeOptimizer adamw(double weight_decay) {
  return [=](NamedParams p, bool fused) -> std::unique_ptr<Optimizer> {
    tisa::optim::AdamWOptions o;
    o.weight_decay = weight_decay;
    o.fused = fused;
    return std::make_unique<tisa::optim::AdamW>(std::move(p), o);
  };
}

TEST(FusedOptimizer, LambAlbertMatchesReference) { expect_fused_matches_reference(lamb(false, false)); }
TEST(FusedOptimizer, LambBiasCorrectedMatchesReference) { expect_fused_matches_reference(lamb(true, false)); }
TEST(FusedOptimizer, NvLambMatchesReference) { expect_fused_matches_reference(lamb(true, true)); }
TEST(FusedOptimizer, LambRatioAllMatchesReference) { expect_fused_matches_reference(lamb(false, true)); }
TEST(FusedOptimizer, AdamWMatchesReference) { expect_fused_matches_reference(adamw(0.01)); }
TEST(FusedOptimizer, AdamWWithoutDecayMatchesReference) { expect_fused_matches_reference(adamw(0.0)); }

// Bitwise the same on a second run and with 1 or 2 threads (fixed chunks, norms summed in order).
TEST(FusedOptimizer, BitwiseRepeatableAtAnyThreadCount) {
  for (const auto& make : {lamb(false, false), lamb(true, true), adamw(0.01)}) {
    const int threads_before = at::get_num_threads();
    std::vector<std::unique_ptr<Optimizer>> runs;
    for (int threads : {1, 2, 1}) {
      at::set_num_threads(threads);
      auto opt = make(make_params(3), true);
      for (int t = 1; t <= 3; ++t) {
        set_grads(*opt, t);
        opt->step(0.02);
      }
      runs.push_back(std::move(opt));
    }
    at::set_num_threads(threads_before);
    expect_same_state(*runs[0], *runs[1], /*bitwise=*/true);
    expect_same_state(*runs[0], *runs[2], /*bitwise=*/true);
  }
}

// A tensor the kernel cannot take directly (here a transposed, non-contiguous gradient) goes the
// reference way: bitwise what the reference optimiser gives it, while the others stay fused.
TEST(FusedOptimizer, NonContiguousGradientTakesTheReferencePath) {
  NamedParams start = make_params(5);
  auto fused = lamb(false, false)(clone_params(start), true);
  auto reference = lamb(false, false)(clone_params(start), false);
  for (auto* opt : {fused.get(), reference.get()}) {
    set_grads(*opt, 1);
    at::Tensor& g = opt->params()[1].second.mutable_grad();  // encoder.dense.weight [48, 40]
    g = g.t().contiguous().t();
    ASSERT_FALSE(g.is_contiguous());
    opt->step(0.02);
  }
  EXPECT_TRUE(at::equal(fused->params()[1].second, reference->params()[1].second));
  expect_same_state(*fused, *reference, /*bitwise=*/false);
}

// The kernel writes through raw pointers; the parameter's version counter still moves, so
// autograd refuses a graph that saved the old value.
TEST(FusedOptimizer, StepBumpsTheParameterVersion) {
  auto opt = adamw(0.01)(make_params(1), true);
  set_grads(*opt, 1);
  const auto before = opt->params()[0].second._version();
  opt->step(0.02);
  EXPECT_GT(opt->params()[0].second._version(), before);
}

}  // namespace
