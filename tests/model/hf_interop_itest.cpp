// Hugging Face round trips in the pinned transformers (scripts/requirements-torch2.txt), one test per
// registered position scheme (position/registry.h: a scheme added there gets its cases), alone and
// with the learned absolute table, and head (issues 14, 34):
//   export (save_hf_model) → AutoModelFor….from_pretrained(dir, trust_remote_code=True) (and
//   AutoModel) reproduces our prediction/SOP or classifier logits, pooler output and every hidden
//   state within 1e-5 → HF's save_pretrained of it imports back with identical parameters and
//   outputs, and `tisa-train model forward` on that directory matches transformers within 1e-5;
//   a plain AlbertFor….from_pretrained(dir) of a non-ALBERT scheme is loud (raises, or warns about
//   the model type and lists the scheme's parameters), and plain ALBERT directories load cleanly.
// HF relative_key (transformers 4.30 layout, several groups and inner layers) imports exactly
// against tests/hf/hf_interop.py's 4.30 reference, which is itself checked on the 4.30 goldens.
// The Python side is tests/hf/hf_interop.py, run with $TISA_PYTHON or the build's TISA_PYTHON
// (default ~/.cache/tisa-train/venv-torch2/bin/python); without torch + transformers the tests skip.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <stdexcept>

#include "close.h"
#include "common/fs.h"
#include "model/albert.h"
#include "model/hf_checkpoint.h"
#include "model/tensor_io.h"
#include "model/hf_remote_code.h"
#include "model/position/fire.h"
#include "model/position/registry.h"
#include "model/position/shaw.h"
#include "scheme_variants.h"
#include "support/test_paths.h"

namespace {

using tisa::config::ModelConfig;
using tisa::model::TensorMap;
using tisa::test::close;

// Runs the Python side; a failure ends the test with its output (GoogleTest reports the exception).
void run_python(const std::string& args) {
  const std::string problem = tisa::test::run_hf_python(args);
  if (!problem.empty()) throw std::runtime_error("tests/hf/hf_interop.py failed: " + problem);
}

// ------------------------------------------------------------------------------------- models
ModelConfig tiny() {
  ModelConfig c;
  c.vocab_size = 100;
  c.embedding_size = 16;
  c.hidden_size = 32;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.intermediate_size = 37;
  c.max_position_embeddings = 64;
  c.classifier_dropout_prob = 0.1;  // eval mode: no effect
  return c;
}

// Scheme `scheme` of the registry, alone or after the learned table. Alone, its parameters are per
// layer; with the table, one module serves every layer (position.sharing model), so both layouts
// run for every scheme with parameters.
ModelConfig scheme_config(const std::string& scheme, bool absolute) {
  ModelConfig c = tiny();
  auto& p = c.position;
  p.absolute = absolute;
  p.relative = scheme;
  tisa::test::set_small_scheme_settings(c);
  p.settings<tisa::model::ShawSettings>().values = true;
  if (absolute) {
    p.sharing = tisa::config::PositionSharing::kModel;
    // FIRE: alone the threshold is below the inputs' length (per-query normaliser), here above it
    // (the bias depends on j − i only).
    p.settings<tisa::model::FireSettings>().init_threshold = 64;
  }
  return c;
}

// HF relative_key's layout: Shaw per attention module (k = P − 1, keys only), several groups and
// inner layers.
ModelConfig relative_key_config() {
  ModelConfig c = tiny();
  auto& p = c.position;
  c.num_hidden_layers = 4;
  c.num_hidden_groups = 2;
  c.inner_group_num = 2;
  p.absolute = false;
  p.relative = "shaw";
  p.settings<tisa::model::ShawSettings>().max_distance = c.max_position_embeddings - 1;
  p.settings<tisa::model::ShawSettings>().values = false;
  p.settings<tisa::model::ShawSettings>().per_layer = false;
  p.settings<tisa::model::ShawSettings>().per_attention_module = true;
  return c;
}

// True for a parameter of a position scheme: the learned table or albert.encoder.<scheme>.*.
bool is_positional(const std::string& name) {
  if (name.find("position_embeddings") != std::string::npos) return true;
  for (const auto& scheme : tisa::model::relative_scheme_names())
    if (name.find(".encoder." + scheme + ".") != std::string::npos) return true;
  return false;
}

// Moves every parameter away from its initialisation (biases and LayerNorms included) and gives the
// position parameters weight, so that a dropped or misplaced one shows in the outputs.
void perturb(torch::nn::Module& m) {
  torch::NoGradGuard no_grad;
  for (auto& p : m.named_parameters(true)) {
    p.value().add_(torch::randn(p.value().sizes()) * (is_positional(p.key()) ? 0.5 : 0.05));
  }
}

TensorMap inputs() {
  const int64_t B = 3, T = 12;
  auto ids = torch::randint(5, 100, {B, T}, torch::kLong);
  auto mask = torch::ones({B, T}, torch::kLong);
  mask[2].narrow(0, 7, T - 7).zero_();
  ids[2].narrow(0, 7, T - 7).zero_();
  auto types = torch::zeros({B, T}, torch::kLong);
  types.narrow(1, 6, T - 6).fill_(1);
  return {{"input_ids", ids}, {"token_type_ids", types}, {"attention_mask", mask}};
}

// Our outputs under the names hf_interop.py writes (hidden_states.<k> after layer application k).
TensorMap forward(tisa::model::LoadedModel& m, const TensorMap& in) {
  torch::NoGradGuard no_grad;
  m.module().eval();
  tisa::model::ForwardOptions opts;
  opts.hidden_states = true;
  TensorMap out;
  tisa::model::EncoderOutput enc;
  if (m.pretraining) {
    auto r = m.pretraining->forward(in.at("input_ids"), in.at("token_type_ids"), in.at("attention_mask"), {}, opts);
    out["prediction_logits"] = r.prediction_logits;
    out["sop_logits"] = r.sop_logits;
    enc = r.encoder;
  } else {
    auto r = m.classification->forward(in.at("input_ids"), in.at("token_type_ids"), in.at("attention_mask"), opts);
    out["logits"] = r.logits;
    enc = r.encoder;
  }
  out["last_hidden_state"] = enc.last_hidden_state;
  out["pooler_output"] = enc.pooler_output;
  for (size_t k = 0; k < enc.hidden_states.size(); ++k) out["hidden_states." + std::to_string(k)] = enc.hidden_states[k];
  return out;
}

// HF records a hidden state after every inner layer; ours are after each layer application.
void expect_outputs_close(const TensorMap& ours, const TensorMap& theirs, int64_t inner_group_num, double tol,
                          const std::string& what) {
  double largest = 0.0;
  for (const auto& [name, t] : ours) {
    std::string key = name;
    if (name.rfind("hidden_states.", 0) == 0)
      key = "hidden_states." + std::to_string(std::stoll(name.substr(14)) * inner_group_num);
    ASSERT_TRUE(theirs.count(key)) << what << ": " << key << " missing";
    EXPECT_TRUE(close(t, theirs.at(key), tol, tol, what + " " + name));
    largest = std::max(largest, (t.to(torch::kDouble) - theirs.at(key).to(torch::kDouble)).abs().max().item<double>());
  }
  std::printf("[hf] %s: max |diff| %.3g over %zu outputs\n", what.c_str(), largest, ours.size());
}

// How far a plain-ALBERT load's encoder output is from ours (the position terms it dropped).
double max_hidden_difference(const TensorMap& ours, const TensorMap& plain) {
  return (ours.at("last_hidden_state") - plain.at("last_hidden_state")).abs().max().item<double>();
}

std::string write_inputs(const std::string& dir, const TensorMap& in) {
  const std::string path = dir + "/inputs.safetensors";
  tisa::model::save_tensor_file(path, in, {});
  return path;
}

// The checks shared by every case, on an exported directory `dir` whose tisa-train outputs on
// `in` are `ours`. `named_difference`: a plain ALBERT load must report missing or unexpected
// tensors (false for a scheme without parameters after the learned table: nothing to name).
void check_round_trip(const std::string& dir, const TensorMap& in, const TensorMap& ours, int64_t inner_group_num,
                      bool plain_albert, bool named_difference = true) {
  const std::string work = tisa::test::make_temp_dir("hf_rt");
  run_python("remote '" + dir + "' '" + write_inputs(work, in) + "' '" + work + "'");

  // 1. transformers reproduces our outputs.
  const auto hf = tisa::model::load_tensor_file(work + "/outputs.safetensors").tensors;
  expect_outputs_close(ours, hf, inner_group_num, 1e-5, "transformers vs tisa-train");

  // 2. HF's save_pretrained imports back with identical parameters and outputs.
  auto original = tisa::model::load_hf_model(dir);
  auto back = tisa::model::load_hf_model(work + "/saved");
  auto a = tisa::model::state_dict(original.module()), b = tisa::model::state_dict(back.module());
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [n, t] : a) {
    ASSERT_TRUE(b.count(n)) << n << " missing after save_pretrained";
    EXPECT_TRUE(torch::equal(t, b.at(n))) << n << " changed through save_pretrained";
  }
  expect_outputs_close(ours, forward(back, in), 1, 0.0, "re-imported");
  // The check, through the command line: `tisa-train model forward` on HF's directory.
  const std::string cli_out = work + "/cli_outputs.safetensors";
  ASSERT_EQ(tisa::test::run(tisa::test::bin_dir() + "/tisa-train model forward --all-outputs --model '" + work +
                            "/saved' --inputs '" + work + "/inputs.safetensors' --output '" + cli_out + "' 2>/dev/null"),
            0);
  auto cli = tisa::model::load_tensor_file(cli_out).tensors;
  for (auto it = cli.begin(); it != cli.end();)  // the outputs hf_interop.py does not write
    it = (it->first.rfind("attentions.", 0) == 0 || it->first == "embedding_output") ? cli.erase(it) : std::next(it);
  ASSERT_TRUE(cli.count("last_hidden_state") && (cli.count("logits") || cli.count("prediction_logits")));
  expect_outputs_close(cli, hf, inner_group_num, 1e-5, "tisa-train model forward vs transformers");

  // 3. A plain ALBERT load is clean for plain directories and loud for every other scheme.
  const auto report = nlohmann::json::parse(tisa::test::slurp(work + "/plain.json"));
  std::string warnings;
  for (const auto& w : report["warnings"]) warnings += w.get<std::string>() + "\n";
  if (plain_albert) {
    EXPECT_FALSE(report["raised"].get<bool>()) << report.dump(1);
    EXPECT_EQ(warnings.find("UNEXPECTED"), std::string::npos) << warnings;
    EXPECT_EQ(warnings.find("MISSING"), std::string::npos) << warnings;
    const auto plain = tisa::model::load_tensor_file(work + "/plain_outputs.safetensors").tensors;
    expect_outputs_close(ours, plain, inner_group_num, 1e-5, "plain AlbertFor… vs tisa-train");
    return;
  }
  if (report["raised"].get<bool>()) return;  // failing is loud enough
  EXPECT_NE(warnings.find("model of type `tisa_albert`"), std::string::npos) << warnings;
  if (named_difference) {
    EXPECT_TRUE(warnings.find("UNEXPECTED") != std::string::npos || warnings.find("MISSING") != std::string::npos)
        << warnings;
  }
  // And what it would compute is not our model: the comparison above can fail (100x its tolerance;
  // a parameter-free term such as RoPE on a tiny random model moves the outputs by a few 1e-3).
  const auto plain = tisa::model::load_tensor_file(work + "/plain_outputs.safetensors").tensors;
  EXPECT_GT(max_hidden_difference(ours, plain), 1e-3);
}

// ------------------------------------------------------------------------------------- tests
struct Case {
  std::string scheme;  // a name of the registry
  bool absolute;       // with the learned table
  bool pretraining;
};

// "rope", "absolute_rope"; the learned table alone (absolute + none) is "absolute".
std::string variant_name(const Case& c) {
  if (c.absolute) return c.scheme == "none" ? "absolute" : "absolute_" + c.scheme;
  return c.scheme;
}

void PrintTo(const Case& c, std::ostream* os) {
  *os << variant_name(c) << (c.pretraining ? " pretraining" : " classification");
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return variant_name(info.param) + (info.param.pretraining ? "_pretraining" : "_classification");
}

// Every scheme of the registry, alone and with the learned table, with either head.
std::vector<Case> registry_cases() {
  std::vector<Case> cases;
  for (const auto& scheme : tisa::model::relative_scheme_names())
    for (bool absolute : {false, true})
      for (bool pretraining : {true, false}) cases.push_back({scheme, absolute, pretraining});
  return cases;
}

class HfRoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(HfRoundTrip, TransformersReproducesAndReimports) {
  TISA_REQUIRE_HF_PYTHON();
  torch::manual_seed(14);
  torch::set_num_threads(1);
  const auto& [scheme, absolute, pretraining] = GetParam();
  const ModelConfig c = scheme_config(scheme, absolute);
  const std::string dir = tisa::test::make_temp_dir("hf_export") + "/model";
  if (pretraining) {
    tisa::model::AlbertForPreTraining m(c);
    perturb(*m);
    tisa::model::save_hf_model(dir, *m, c, tisa::model::kPretrainingArchitecture);
  } else {
    tisa::model::AlbertForSequenceClassification m(c, 3);
    perturb(*m);
    tisa::model::save_hf_model(dir, *m, c, tisa::model::kClassificationArchitecture, 3);
  }
  auto loaded = tisa::model::load_hf_model(dir);
  const auto in = inputs();
  bool has_scheme_parameters = false;
  for (const auto& name : tisa::model::parameter_names(loaded.module()))
    has_scheme_parameters |= is_positional(name) && name.find("position_embeddings") == std::string::npos;
  check_round_trip(dir, in, forward(loaded, in), c.inner_group_num, absolute && scheme == "none",
                   !absolute || has_scheme_parameters);
}

INSTANTIATE_TEST_SUITE_P(Schemes, HfRoundTrip, ::testing::ValuesIn(registry_cases()), case_name);

// Every scheme of the registry has its part of the remote modelling file, and that file carries it.
TEST(HfRemoteCode, EveryRegisteredSchemeHasItsFragment) {
  const std::string code = tisa::model::remote_modeling_code();
  for (const auto& scheme : tisa::model::relative_scheme_names()) {
    SCOPED_TRACE(scheme);
    const auto* fragment = tisa::model::remote_code_fragment(scheme);
    ASSERT_NE(fragment, nullptr) << "src/model/position/" << scheme << ".py is missing";
    EXPECT_NE(code.find(fragment->text), std::string::npos);
    EXPECT_NE(fragment->text.find("register_scheme(\"" + scheme + "\""), std::string::npos)
        << scheme << ".py does not register_scheme(\"" << scheme << "\", ...)";
  }
}

// Writes `m` (shaw per attention module, k = P − 1, keys only) as transformers 4.30 wrote
// relative_key models: distance_embedding per attention module (rows i − j, unscaled), an unused
// absolute table, position_embedding_type relative_key, model_type albert.
void write_hf430_relative_key(const std::string& dir, torch::nn::Module& m, const ModelConfig& c,
                              const std::string& architecture, int64_t num_labels) {
  tisa::fs::create_directories(dir);
  const double sqrt_d = std::sqrt(static_cast<double>(c.hidden_size / c.num_attention_heads));
  TensorMap hf;
  for (const auto& [name, t] : tisa::model::state_dict(m)) {
    const std::string prefix = "albert.encoder.shaw.";
    if (name.rfind(prefix, 0) != 0) {
      hf[name] = t.detach().clone();
      continue;
    }
    const int64_t module = std::stoll(name.substr(prefix.size()));
    hf["albert.encoder.albert_layer_groups." + std::to_string(module / c.inner_group_num) + ".albert_layers." +
       std::to_string(module % c.inner_group_num) + ".attention.distance_embedding.weight"] =
        (t.detach() / sqrt_d).flip({0}).contiguous();
  }
  hf["albert.embeddings.position_embeddings.weight"] = torch::randn({c.max_position_embeddings, c.embedding_size});
  tisa::model::save_tensor_file(dir + "/model.safetensors", hf, {{"format", "pt"}});
  auto j = nlohmann::json::parse(tisa::model::hf_config_json(c, architecture, num_labels));
  j["model_type"] = "albert";
  j["architectures"] = {architecture};
  j["position_embedding_type"] = "relative_key";
  j.erase("auto_map");
  j.erase("tisa_train");
  tisa::fs::write_file_atomic(dir + "/config.json", j.dump(2));
}

class HfRelativeKey : public ::testing::TestWithParam<bool> {};

TEST_P(HfRelativeKey, SeveralGroupsImportExactlyAndRoundTrip) {
  TISA_REQUIRE_HF_PYTHON();
  torch::manual_seed(15);
  torch::set_num_threads(1);
  const bool pretraining = GetParam();
  const ModelConfig c = relative_key_config();
  const std::string root = tisa::test::make_temp_dir("hf_relkey");
  const std::string src = root + "/hf430";
  if (pretraining) {
    tisa::model::AlbertForPreTraining m(c);
    perturb(*m);
    write_hf430_relative_key(src, *m, c, tisa::model::kPretrainingArchitecture, 2);
  } else {
    tisa::model::AlbertForSequenceClassification m(c, 3);
    perturb(*m);
    write_hf430_relative_key(src, *m, c, tisa::model::kClassificationArchitecture, 3);
  }
  const auto in = inputs();
  const std::string in_path = write_inputs(root, in);
  run_python("relative_key '" + src + "' '" + in_path + "' '" + root + "/reference.safetensors'");
  const auto reference = tisa::model::load_tensor_file(root + "/reference.safetensors").tensors;

  auto imported = tisa::model::load_hf_model(src);
  EXPECT_EQ(imported.albert()->encoder->schemes.size(), 4u);  // 2 groups × 2 inner layers
  const auto ours = forward(imported, in);
  expect_outputs_close(ours, reference, c.inner_group_num, 1e-5, "relative_key import vs transformers 4.30 semantics");

  const std::string exported = root + "/exported";
  tisa::model::save_hf_model(exported, imported.module(), imported.config.model, imported.config.architecture,
                             imported.config.num_labels);
  check_round_trip(exported, in, ours, c.inner_group_num, false);
}

INSTANTIATE_TEST_SUITE_P(Heads, HfRelativeKey, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return std::string(i.param ? "pretraining" : "classification");
                         });

// The 4.30 goldens: our import of relative_key, exported as remote code, run by transformers 5
// gives what transformers 4.30 gave; and tests/hf/hf_interop.py's 4.30 reference agrees with them.
TEST(HfRelativeKeyGolden, ExportMatchesTransformers430) {
  TISA_REQUIRE_HF_PYTHON();
  TISA_REQUIRE_SHARED("golden/hf_albert/pretraining_relative_key/config.json");
  for (const char* name : {"pretraining_relative_key", "seqcls2_relative_key"}) {
    SCOPED_TRACE(name);
    const std::string src = tisa::test::shared_path(std::string("golden/hf_albert/") + name);
    const auto golden = tisa::model::load_tensor_file(src + "/outputs.safetensors").tensors;
    const std::string work = tisa::test::make_temp_dir("hf_golden");
    run_python("relative_key '" + src + "' '" + src + "/inputs.safetensors' '" + work + "/reference.safetensors'");
    const auto reference = tisa::model::load_tensor_file(work + "/reference.safetensors").tensors;
    for (const char* key : {"hidden_states.2", "pooler_output"})
      EXPECT_TRUE(close(reference.at(key), golden.at(key), 1e-5, 1e-4, std::string("reference ") + key));

    auto m = tisa::model::load_hf_model(src);
    tisa::model::save_hf_model(work + "/exported", m.module(), m.config.model, m.config.architecture,
                               m.config.num_labels);
    run_python("remote '" + work + "/exported' '" + src + "/inputs.safetensors' '" + work + "'");
    const auto hf = tisa::model::load_tensor_file(work + "/outputs.safetensors").tensors;
    for (const auto& [key, ref] : hf) {
      if (!golden.count(key)) continue;
      EXPECT_TRUE(close(ref, golden.at(key), 1e-5, 1e-4, std::string("exported ") + key));
    }
  }
}

}  // namespace
