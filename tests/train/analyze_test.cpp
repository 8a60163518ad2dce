// End-to-end `analyze` on tiny HF-format checkpoints written here (config.json + model.safetensors):
// ALBERT with TISA parameters, RoBERTa (position offset), ELECTRA (embeddings_project) and a bare
// BERT base model. Checks analysis.json against the library functions and known answers
// (sinusoidal tables give τ(P·Pᵀ) = 1, TISA biases τ = 1) and that the SVG files are well-formed.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "analysis/checkpoint_analysis.h"
#include "analysis/invariance.h"
#include "common/error.h"
#include "common/fs.h"
#include "model/tensor_io.h"
#include "support/svg_check.h"
#include "support/test_paths.h"

using namespace tisa;
using nlohmann::json;

namespace {

// [rows, 4]: (sin ωi, cos ωi, sin ω'i, cos ω'i) → P·Pᵀ[i, j] = cos ω(i−j) + cos ω'(i−j), Toeplitz.
torch::Tensor sinusoidal(int64_t rows) {
  auto pos = torch::arange(rows, torch::kFloat).unsqueeze(1);
  auto freq = torch::tensor({0.4f, 0.07f}).unsqueeze(0);
  return torch::cat({torch::sin(pos * freq), torch::cos(pos * freq)}, 1);
}

void write_checkpoint(const std::string& dir, const json& config, const model::TensorMap& tensors) {
  fs::create_directories(dir);
  fs::write_file_atomic(dir + "/config.json", config.dump(2));
  model::save_tensor_file(dir + "/model.safetensors", tensors);
}

void expect_svg(const std::string& path) {
  ASSERT_TRUE(fs::exists(path)) << path;
  std::string why;
  EXPECT_TRUE(test::svg_well_formed(fs::read_file(path), &why)) << path << ": " << why;
}

}  // namespace

TEST(AnalyzeTest, AlbertWithTisaEndToEnd) {
  auto root = test::make_temp_dir("analyze");
  auto gen = at::detail::createCPUGenerator(21);
  const int64_t P = 24, E = 4, H = 8, heads = 2;
  model::TensorMap t;
  std::string layer = "albert.encoder.albert_layer_groups.0.albert_layers.0.attention.";
  t["albert.embeddings.position_embeddings.weight"] = sinusoidal(P);
  t["albert.embeddings.word_embeddings.weight"] = torch::randn({10, E}, gen);
  t["albert.encoder.embedding_hidden_mapping_in.weight"] = torch::randn({H, E}, gen);
  t["albert.encoder.embedding_hidden_mapping_in.bias"] = torch::randn({H}, gen);
  for (const char* w : {"query", "key", "value"}) {
    t[layer + w + ".weight"] = torch::randn({H, H}, gen);
    t[layer + w + ".bias"] = torch::randn({H}, gen);
  }
  for (int l = 0; l < 2; ++l) {  // per-layer TISA, S = 3 kernels, [S, H] layout
    std::string base = "albert.encoder.tisa." + std::to_string(l) + ".";
    t[base + "offsets"] = torch::randn({3, heads}, gen) * 5;
    t[base + "amplitudes"] = torch::randn({3, heads}, gen) * 0.1 + 0.1;
    t[base + "sharpness"] = torch::randn({3, heads}, gen) * 0.01 + 0.1;
  }
  json config = {{"model_type", "albert"},         {"hidden_size", H},
                 {"embedding_size", E},            {"num_attention_heads", heads},
                 {"max_position_embeddings", P},   {"tisa_train", {{"position", {{"relative", "tisa"}}}}}};
  write_checkpoint(root + "/ckpt", config, t);

  analysis::AnalyzeOptions options;
  options.model_dir = root + "/ckpt";
  options.out_dir = root + "/out";
  options.positions = 20;
  json result = analysis::analyze_checkpoint(options);
  json on_disk = json::parse(fs::read_file(root + "/out/analysis.json"));
  EXPECT_EQ(on_disk, result);

  const json& abs = result.at("absolute");
  EXPECT_EQ(abs.at("positions"), 20);
  EXPECT_EQ(abs.at("mapping"), "albert.encoder.embedding_hidden_mapping_in");
  EXPECT_NEAR(abs.at("tau_gram").get<double>(), 1.0, 1e-9) << "sinusoidal table: P·Pᵀ is Toeplitz";
  auto expected = analysis::position_invariance(
      t["albert.embeddings.position_embeddings.weight"], t["albert.encoder.embedding_hidden_mapping_in.weight"],
      t["albert.encoder.embedding_hidden_mapping_in.bias"], t[layer + "query.weight"], t[layer + "query.bias"],
      t[layer + "key.weight"], t[layer + "key.bias"], heads, 20);
  ASSERT_EQ(abs.at("tau_heads").size(), 2u);
  for (int h = 0; h < 2; ++h) EXPECT_NEAR(abs.at("tau_heads")[h].get<double>(), expected.tau_heads[h], 1e-12);
  EXPECT_LT(expected.tau_heads_mean, 0.999) << "biases break Toeplitz structure of the head term";
  EXPECT_EQ(abs.at("gram_diagonal_means").size(), 39u);

  const json& tisa = result.at("tisa");
  ASSERT_EQ(tisa.at("layers").size(), 2u);
  EXPECT_EQ(tisa.at("length"), 20);
  for (const auto& l : tisa.at("layers"))
    for (const auto& tau : l.at("tau_bias_heads")) EXPECT_DOUBLE_EQ(tau.get<double>(), 1.0);
  // f at r = 0 of layer 1, head 1, by hand.
  auto c = t["albert.encoder.tisa.1.offsets"], a = t["albert.encoder.tisa.1.amplitudes"],
       b = t["albert.encoder.tisa.1.sharpness"];
  double f0 = 0;
  for (int s = 0; s < 3; ++s)
    f0 += a[s][1].item<double>() * std::exp(-std::abs(b[s][1].item<double>()) * std::pow(c[s][1].item<double>(), 2));
  EXPECT_NEAR(tisa.at("layers")[1].at("f")[1][19].get<double>(), f0, 1e-9);  // index r + n − 1
  EXPECT_EQ(result.at("tisa_train").at("position").at("relative"), "tisa");

  for (const char* f : {"gram.svg", "gram_toeplitz.svg", "heads.svg", "head_profiles.svg", "tisa_kernels.svg", "tisa_bias.svg"})
    expect_svg(root + "/out/" + f);
}

TEST(AnalyzeTest, RobertaSkipsPaddingRowsAndElectraUsesProjection) {
  auto root = test::make_temp_dir("analyze");
  auto gen = at::detail::createCPUGenerator(5);
  // RoBERTa: rows 0..1 are junk (padding_idx = 1); rows 2.. are sinusoidal → τ = 1 only if skipped.
  {
    model::TensorMap t;
    auto junk = torch::randn({2, 4}, gen) * 10;
    t["roberta.embeddings.position_embeddings.weight"] = torch::cat({junk, sinusoidal(18)}, 0);
    t["roberta.encoder.layer.0.attention.self.query.weight"] = torch::randn({4, 4}, gen);
    t["roberta.encoder.layer.0.attention.self.key.weight"] = torch::randn({4, 4}, gen);
    write_checkpoint(root + "/roberta", {{"model_type", "roberta"}, {"num_attention_heads", 2}, {"pad_token_id", 1}}, t);
    analysis::AnalyzeOptions o{root + "/roberta", root + "/roberta_out", 0, false};
    json r = analysis::analyze_checkpoint(o);
    EXPECT_EQ(r.at("absolute").at("rows_skipped"), 2);
    EXPECT_EQ(r.at("absolute").at("positions"), 18);
    EXPECT_NEAR(r.at("absolute").at("tau_gram").get<double>(), 1.0, 1e-9);
    // No biases, no mapping: Q_h·K_hᵀ = P·(Wq_hᵀ Wk_h)·Pᵀ is not Toeplitz in general, but finite.
    EXPECT_TRUE(r.at("scheme").is_null()) << "no tisa_train block: no scheme part";
    EXPECT_FALSE(r.contains("tisa"));
    EXPECT_FALSE(fs::exists(root + "/roberta_out/gram.svg")) << "pictures off";
  }
  // ELECTRA with embeddings_project (E = 4 → H = 6), heads = 3.
  {
    model::TensorMap t;
    auto p = torch::randn({10, 4}, gen);
    t["electra.embeddings.position_embeddings.weight"] = p;
    t["electra.embeddings_project.weight"] = torch::randn({6, 4}, gen);
    t["electra.embeddings_project.bias"] = torch::randn({6}, gen);
    for (const char* w : {"query", "key"}) {
      t[std::string("electra.encoder.layer.0.attention.self.") + w + ".weight"] = torch::randn({6, 6}, gen);
      t[std::string("electra.encoder.layer.0.attention.self.") + w + ".bias"] = torch::randn({6}, gen);
    }
    write_checkpoint(root + "/electra", {{"model_type", "electra"}, {"num_attention_heads", 3}}, t);
    json r = analysis::analyze_checkpoint({root + "/electra", root + "/electra_out", 8, true});
    auto e = analysis::position_invariance(
        p, t["electra.embeddings_project.weight"], t["electra.embeddings_project.bias"],
        t["electra.encoder.layer.0.attention.self.query.weight"], t["electra.encoder.layer.0.attention.self.query.bias"],
        t["electra.encoder.layer.0.attention.self.key.weight"], t["electra.encoder.layer.0.attention.self.key.bias"], 3, 8);
    EXPECT_EQ(r.at("absolute").at("mapping"), "electra.embeddings_project");
    EXPECT_NEAR(r.at("absolute").at("tau_gram").get<double>(), e.tau_gram, 1e-12);
    EXPECT_NEAR(r.at("absolute").at("tau_heads")[2].get<double>(), e.tau_heads[2], 1e-12);
    expect_svg(root + "/electra_out/heads.svg");
  }
}

TEST(AnalyzeTest, BareBertAndErrors) {
  auto root = test::make_temp_dir("analyze");
  auto gen = at::detail::createCPUGenerator(8);
  model::TensorMap t;  // BertModel saved without the "bert." prefix
  t["embeddings.position_embeddings.weight"] = torch::randn({12, 4}, gen);
  t["encoder.layer.0.attention.self.query.weight"] = torch::randn({4, 4}, gen);
  t["encoder.layer.0.attention.self.key.weight"] = torch::randn({4, 4}, gen);
  write_checkpoint(root + "/bert", {{"model_type", "bert"}, {"num_attention_heads", 1}}, t);
  json r = analysis::analyze_checkpoint({root + "/bert", root + "/bert_out", 0, false});
  EXPECT_TRUE(r.at("absolute").at("mapping").is_null());
  EXPECT_EQ(r.at("absolute").at("position_table"), "embeddings.position_embeddings.weight");
  double tau = r.at("absolute").at("tau_gram").get<double>();
  EXPECT_GT(tau, 0.0);
  EXPECT_LT(tau, 0.9) << "random table";

  try {  // more positions than rows
    analysis::analyze_checkpoint({root + "/bert", root + "/x", 13, false});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--positions 13"), std::string::npos) << e.what();
  }
  t.erase("encoder.layer.0.attention.self.key.weight");
  write_checkpoint(root + "/broken", {{"model_type", "bert"}, {"num_attention_heads", 1}}, t);
  try {
    analysis::analyze_checkpoint({root + "/broken", root + "/x", 0, false});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("encoder.layer.0.attention.self.key.weight"), std::string::npos) << e.what();
  }
  write_checkpoint(root + "/gpt", {{"model_type", "gpt2"}}, t);
  EXPECT_THROW(analysis::analyze_checkpoint({root + "/gpt", root + "/x", 0, false}), Error);
}

// Issue 18, class 5: a NaN position table used to be analysed as perfectly translation invariant
// (τ = 1); a non-finite tensor the analysis reads is an error naming it, and so is a weight of an
// integer or bool dtype.
TEST(AnalyzeTest, NonFiniteOrNonFloatWeightsAreErrors) {
  auto root = test::make_temp_dir("analyze");
  const int64_t P = 8, E = 4;
  json config = {{"model_type", "bert"}, {"hidden_size", E}, {"num_attention_heads", 1}, {"max_position_embeddings", P}};
  model::TensorMap t;
  t["bert.embeddings.position_embeddings.weight"] = torch::full({P, E}, std::nanf(""));
  t["bert.encoder.layer.0.attention.self.query.weight"] = torch::eye(E);
  t["bert.encoder.layer.0.attention.self.key.weight"] = torch::eye(E);
  write_checkpoint(root + "/nan", config, t);
  analysis::AnalyzeOptions options;
  options.model_dir = root + "/nan";
  options.out_dir = root + "/out";
  options.pictures = false;
  try {
    analysis::analyze_checkpoint(options);
    FAIL() << "a NaN table was analysed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'embeddings.position_embeddings.weight' has 32 NaN"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(root + "/out/analysis.json"));
  t["bert.embeddings.position_embeddings.weight"] = torch::ones({P, E}, torch::kBool);
  write_checkpoint(root + "/bool", config, t);
  options.model_dir = root + "/bool";
  try {
    analysis::analyze_checkpoint(options);
    FAIL() << "a BOOL table was analysed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has dtype Bool; model weights are floating point"), std::string::npos)
        << e.what();
  }
}
