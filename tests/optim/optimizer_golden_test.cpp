// LAMB (four forms) and AdamW against shared/golden/optim: three steps from the stored initial
// values and gradients; every step's params, m, v (and LAMB trust ratios, clip norm/scale) must be
// close(1e-6, 1e-5) (golden README "optim/"). Runs on CPU, and on CUDA when available.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "config/config.h"
#include "model/tensor_io.h"
#include "optim/adamw.h"
#include "optim/grad_utils.h"
#include "optim/lamb.h"
#include "optim/optimizer.h"
#include "support/test_paths.h"

namespace {

using tisa::optim::NamedParams;
using TensorMap = std::map<std::string, at::Tensor>;

constexpr double kAtol = 1e-6;
constexpr double kRtol = 1e-5;

TensorMap load(const std::string& rel) {
  return tisa::model::load_tensor_file(tisa::test::shared_path("golden/optim/" + rel)).tensors;
}

// |x − ref| ≤ atol + rtol·|ref| elementwise; the failure message names the key and the worst gap.
void expect_close(const at::Tensor& got, const at::Tensor& ref, const std::string& what,
                  double atol = kAtol, double rtol = kRtol) {
  at::Tensor x = got.detach().to(at::kCPU, at::kDouble).flatten();
  at::Tensor r = ref.to(at::kDouble).flatten();
  ASSERT_EQ(x.numel(), r.numel()) << what;
  at::Tensor excess = (x - r).abs() - (atol + rtol * r.abs());
  double worst = excess.max().item<double>();
  EXPECT_LE(worst, 0.0) << what << ": max |diff| " << (x - r).abs().max().item<double>()
                        << " exceeds close(" << atol << ", " << rtol << ")";
}

struct Golden {
  TensorMap inputs, expected;
  std::vector<std::string> names;  // parameter names, in the inputs' (sorted) order
};

Golden load_golden(const std::string& inputs, const std::string& expected) {
  Golden g{load(inputs), load(expected), {}};
  for (const auto& [key, t] : g.inputs)
    if (key.rfind("init.", 0) == 0) g.names.push_back(key.substr(5));
  return g;
}

NamedParams make_params(const Golden& g, const at::Device& device) {
  NamedParams params;
  for (const auto& name : g.names)
    params.emplace_back(name, g.inputs.at("init." + name).to(device).clone().requires_grad_(true));
  return params;
}

void set_grads(const NamedParams& params, const Golden& g, int t, const at::Device& device) {
  for (const auto& [name, p] : params)
    p.mutable_grad() = g.inputs.at("grad." + std::to_string(t) + "." + name).to(device).clone();
}

void compare_step(tisa::optim::Optimizer& opt, const Golden& g, int t) {
  const std::string prefix = "step" + std::to_string(t) + ".";
  auto state = opt.state_dict();
  for (const auto& [name, p] : opt.params()) {
    expect_close(p, g.expected.at(prefix + "param." + name), prefix + "param." + name);
    expect_close(state.at("m." + name), g.expected.at(prefix + "m." + name), prefix + "m." + name);
    expect_close(state.at("v." + name), g.expected.at(prefix + "v." + name), prefix + "v." + name);
    EXPECT_EQ(state.at("step." + name).item<int64_t>(), t);
  }
  if (auto* lamb = dynamic_cast<tisa::optim::Lamb*>(&opt)) {
    auto ratios = lamb->last_trust_ratios();
    ASSERT_EQ(ratios.size(), opt.params().size());
    for (const auto& [name, r] : ratios)
      expect_close(r, g.expected.at(prefix + "trust_ratio." + name), prefix + "trust_ratio." + name);
  }
}

using Factory = std::function<std::unique_ptr<tisa::optim::Optimizer>(NamedParams)>;

// Three steps with the golden gradients; clip_norm > 0 clips first and checks norm and scale.
void run_golden(const std::string& inputs, const std::string& expected, const Factory& make,
                double lr, double clip_norm, const at::Device& device) {
  Golden g = load_golden(inputs, expected);
  ASSERT_EQ(g.names.size(), 4u);
  auto opt = make(make_params(g, device));
  for (int t = 1; t <= 3; ++t) {
    SCOPED_TRACE("step " + std::to_string(t));
    set_grads(opt->params(), g, t, device);
    if (clip_norm > 0) {
      const std::string prefix = "step" + std::to_string(t) + ".";
      std::vector<at::Tensor> before;
      for (const auto& [name, p] : opt->params()) before.push_back(p.grad().clone());
      at::Tensor norm = opt->clip_grad_norm(clip_norm);
      expect_close(norm, g.expected.at(prefix + "global_grad_norm"), prefix + "global_grad_norm");
      const at::Tensor scale = g.expected.at(prefix + "clip_scale");
      EXPECT_LT(scale.item<double>(), 1.0) << "the golden gradients should need clipping";
      size_t i = 0;
      for (const auto& [name, p] : opt->params())
        expect_close(p.grad(), before[i++].cpu() * scale, prefix + "clipped grad " + name);
    }
    opt->step(lr);
    compare_step(*opt, g, t);
  }
}

tisa::optim::LambOptions lamb_options(bool bias_correction, bool ratio_all, bool fused) {
  tisa::optim::LambOptions o;  // β1 0.9, β2 0.999, ε 1e-6, λ 0.01 (optim.json)
  o.bias_correction = bias_correction;
  o.trust_ratio_all = ratio_all;
  o.fused = fused;
  return o;
}

Factory lamb_factory(bool bias_correction, bool ratio_all, bool fused) {
  return [=](NamedParams p) {
    return std::make_unique<tisa::optim::Lamb>(std::move(p), lamb_options(bias_correction, ratio_all, fused));
  };
}

// "cpu" (the fused CPU kernels), "cpu-reference" (the per-op path, fused = false), "cuda".
class OptimGolden : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "cuda" && !torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  }
  at::Device device() const { return at::Device(GetParam() == "cuda" ? "cuda" : "cpu"); }
  bool fused() const { return GetParam() != "cpu-reference"; }
};

TEST_P(OptimGolden, LambAlbert) {
  TISA_REQUIRE_SHARED("golden/optim/lamb_albert.safetensors");
  run_golden("inputs.safetensors", "lamb_albert.safetensors", lamb_factory(false, false, fused()), 0.01, 0,
             device());
}

TEST_P(OptimGolden, LambAlbertClip1) {
  TISA_REQUIRE_SHARED("golden/optim/lamb_albert_clip1.safetensors");
  run_golden("inputs.safetensors", "lamb_albert_clip1.safetensors", lamb_factory(false, false, fused()), 0.01,
             1.0, device());
}

TEST_P(OptimGolden, LambBiasCorrected) {
  TISA_REQUIRE_SHARED("golden/optim/lamb_bias_corrected.safetensors");
  run_golden("inputs.safetensors", "lamb_bias_corrected.safetensors", lamb_factory(true, false, fused()),
             0.01, 0, device());
}

TEST_P(OptimGolden, LambBiasCorrectedRatioAll) {
  TISA_REQUIRE_SHARED("golden/optim/lamb_bc_ratio_all.safetensors");
  run_golden("inputs.safetensors", "lamb_bc_ratio_all.safetensors", lamb_factory(true, true, fused()), 0.01,
             0, device());
}

TEST_P(OptimGolden, LambAlbertZeroNormGuards) {
  TISA_REQUIRE_SHARED("golden/optim/lamb_albert_guards.safetensors");
  run_golden("guards_inputs.safetensors", "lamb_albert_guards.safetensors",
             lamb_factory(false, false, fused()), 0.01, 0, device());
}

TEST_P(OptimGolden, AdamWTorch) {
  TISA_REQUIRE_SHARED("golden/optim/adamw_torch.safetensors");
  tisa::optim::AdamWOptions o;  // betas (0.9, 0.999), eps 1e-6, decay 0.01 (optim.json)
  o.fused = fused();
  run_golden("inputs.safetensors", "adamw_torch.safetensors",
             [&](NamedParams p) { return std::make_unique<tisa::optim::AdamW>(std::move(p), o); },
             1e-3, 0, device());
}

// The config factory builds the same optimisers (ALBERT's LAMB here).
TEST_P(OptimGolden, FactoryFromConfigMatchesLambAlbert) {
  TISA_REQUIRE_SHARED("golden/optim/lamb_albert.safetensors");
  tisa::config::OptimizerConfig cfg;  // defaults: lamb, ALBERT hyper-parameters
  cfg.fused = fused();
  run_golden("inputs.safetensors", "lamb_albert.safetensors",
             [&](NamedParams p) { return tisa::optim::make_optimizer(cfg, std::move(p)); }, 0.01, 0,
             device());
}

// Exact resume: save after step 1 (params and state through a safetensors file, as a checkpoint
// does), rebuild from them, continue: steps 2 and 3 match the uninterrupted run bitwise (and
// hence the golden).
TEST_P(OptimGolden, ResumeFromStateDictIsExact) {
  TISA_REQUIRE_SHARED("golden/optim/lamb_bias_corrected.safetensors");
  Golden g = load_golden("inputs.safetensors", "lamb_bias_corrected.safetensors");
  const auto options = lamb_options(true, false, fused());
  tisa::optim::Lamb straight(make_params(g, device()), options);
  for (int t = 1; t <= 3; ++t) {
    set_grads(straight.params(), g, t, device());
    straight.step(0.01);
  }

  tisa::optim::Lamb first(make_params(g, device()), options);
  set_grads(first.params(), g, 1, device());
  first.step(0.01);
  // What a checkpoint holds: CPU copies of the params and of the state.
  NamedParams saved_params;
  for (const auto& [name, p] : first.params())
    saved_params.emplace_back(name, p.detach().cpu().clone());
  const std::string file = tisa::test::make_temp_dir("optim_resume") + "/optimizer.safetensors";
  tisa::model::save_tensor_file(file, first.state_dict());
  tisa::optim::StateMap saved_state = tisa::model::load_tensor_file(file).tensors;
  EXPECT_EQ(saved_state.at("step." + g.names[0]).dim(), 0);
  EXPECT_EQ(saved_state.at("num_updates").item<int64_t>(), 1);

  NamedParams restored_params;
  for (const auto& [name, p] : saved_params)
    restored_params.emplace_back(name, p.to(device()).clone().requires_grad_(true));
  tisa::optim::Lamb resumed(std::move(restored_params), options);
  resumed.load_state_dict(saved_state);
  EXPECT_EQ(resumed.num_updates(), 1);
  for (int t = 2; t <= 3; ++t) {
    set_grads(resumed.params(), g, t, device());
    resumed.step(0.01);
  }
  compare_step(resumed, g, 3);
  auto a = straight.state_dict(), b = resumed.state_dict();
  for (size_t i = 0; i < straight.params().size(); ++i) {
    const auto& name = straight.params()[i].first;
    EXPECT_TRUE(at::equal(straight.params()[i].second.cpu(), resumed.params()[i].second.cpu())) << name;
    EXPECT_TRUE(at::equal(a.at("m." + name).cpu(), b.at("m." + name).cpu())) << name;
    EXPECT_TRUE(at::equal(a.at("v." + name).cpu(), b.at("v." + name).cpu())) << name;
  }
}

// The goldens discriminate: ALBERT's form misses the bias-corrected golden at step 1 (its first
// step on excluded tensors is ~3.16× larger), and the bias-corrected form misses NVLAMB's.
TEST_P(OptimGolden, VariantsAreDistinguishedByTheGoldens) {
  TISA_REQUIRE_SHARED("golden/optim/lamb_bc_ratio_all.safetensors");
  auto worst_excess = [&](const std::string& expected, bool bc, bool all) {
    Golden g = load_golden("inputs.safetensors", expected);
    tisa::optim::Lamb opt(make_params(g, device()), lamb_options(bc, all, fused()));
    set_grads(opt.params(), g, 1, device());
    opt.step(0.01);
    double worst = -1;
    for (const auto& [name, p] : opt.params()) {
      at::Tensor ref = g.expected.at("step1.param." + name).to(at::kDouble);
      at::Tensor x = p.detach().cpu().to(at::kDouble);
      worst = std::max(worst, ((x - ref).abs() - (kAtol + kRtol * ref.abs())).max().item<double>());
    }
    return worst;
  };
  EXPECT_GT(worst_excess("lamb_bias_corrected.safetensors", false, false), 1e-3);
  EXPECT_GT(worst_excess("lamb_bc_ratio_all.safetensors", true, false), 1e-5);
  EXPECT_LE(worst_excess("lamb_bc_ratio_all.safetensors", true, true), 0.0);
}

INSTANTIATE_TEST_SUITE_P(Devices, OptimGolden, ::testing::Values("cpu", "cpu-reference", "cuda"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// The exclusion rule against optim.json's flag for every golden name.
TEST(OptimExclusion, MatchesGoldenFlags) {
  TISA_REQUIRE_SHARED("golden/optim/optim.json");
  std::ifstream in(tisa::test::shared_path("golden/optim/optim.json"));
  auto j = nlohmann::json::parse(in);
  ASSERT_EQ(j.at("excluded").size(), 8u);
  for (const auto& [name, flag] : j.at("excluded").items())
    EXPECT_EQ(tisa::optim::excluded_from_decay(name), flag.get<bool>()) << name;
  EXPECT_FALSE(tisa::optim::excluded_from_decay("albert.embeddings.word_embeddings.weight"));
  EXPECT_TRUE(tisa::optim::excluded_from_decay("predictions.bias"));
}

}  // namespace
