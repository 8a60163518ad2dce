// ALBERT model properties beyond the HF goldens: parameter names per position scheme, the
// masked-positions MLM path, save/load round trips (ours and HF relative_key form), strict loading
// errors, the registry's error, positional parameter counts, and bf16 autocast.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "close.h"
#include "common/error.h"
#include "common/fs.h"
#include "model/albert.h"
#include "model/autocast.h"
#include "model/hf_checkpoint.h"
#include "model/position/registry.h"
#include "support/test_paths.h"
#include "model/position/shaw.h"
#include "model/position/tisa.h"

namespace {

using tisa::config::ModelConfig;
using tisa::test::close;

ModelConfig tiny(bool absolute, std::string rel) {
  ModelConfig c;
  c.vocab_size = 50;
  c.embedding_size = 8;
  c.hidden_size = 16;
  c.num_hidden_layers = 4;
  c.num_hidden_groups = 2;
  c.inner_group_num = 2;
  c.num_attention_heads = 4;
  c.intermediate_size = 32;
  c.max_position_embeddings = 32;
  c.classifier_dropout_prob = 0.0;
  c.position.absolute = absolute;
  c.position.relative = rel;
  c.position.settings<tisa::model::ShawSettings>().max_distance = 3;
  c.position.settings<tisa::model::TisaSettings>().kernels = 2;
  return c;
}

struct Batch {
  torch::Tensor ids, types, mask;
};
Batch batch() {
  torch::manual_seed(7);
  Batch b;
  b.ids = torch::randint(5, 50, {2, 9}, torch::kLong);
  b.types = torch::zeros({2, 9}, torch::kLong);
  b.types.narrow(1, 5, 4).fill_(1);
  b.mask = torch::ones({2, 9}, torch::kLong);
  b.mask[1].narrow(0, 6, 3).fill_(0);
  b.ids[1].narrow(0, 6, 3).fill_(0);
  return b;
}

bool has(const std::vector<std::string>& names, const std::string& n) {
  return std::find(names.begin(), names.end(), n) != names.end();
}

TEST(Albert, ParameterNamesPerScheme) {
  torch::manual_seed(0);
  auto names = tisa::model::parameter_names(*tisa::model::AlbertForPreTraining(tiny(true, "tisa")));
  EXPECT_TRUE(has(names, "albert.embeddings.position_embeddings.weight"));
  EXPECT_TRUE(has(names, "albert.encoder.albert_layer_groups.1.albert_layers.1.attention.query.weight"));
  EXPECT_TRUE(has(names, "albert.encoder.tisa.7.offsets"));  // 4 layers × 2 inner, per layer
  EXPECT_TRUE(has(names, "albert.encoder.tisa.0.sharpness"));
  EXPECT_TRUE(has(names, "predictions.bias"));
  EXPECT_FALSE(has(names, "predictions.decoder.weight"));
  auto c = tiny(false, "shaw");
  c.position.settings<tisa::model::ShawSettings>().per_layer = false;
  names = tisa::model::parameter_names(*tisa::model::AlbertForPreTraining(c));
  EXPECT_FALSE(has(names, "albert.embeddings.position_embeddings.weight"));
  EXPECT_TRUE(has(names, "albert.encoder.shaw.0.keys"));
  EXPECT_TRUE(has(names, "albert.encoder.shaw.0.values"));
  EXPECT_FALSE(has(names, "albert.encoder.shaw.1.keys"));
  EXPECT_EQ(tisa::model::positional_parameter_count(c), 2 * 7 * 4);
  EXPECT_EQ(tisa::model::positional_parameter_count(tiny(true, "tisa")), 32 * 8 + 8 * 3 * 2 * 4);
}

TEST(Albert, RegistryNamesUnknownScheme) {
  try {
    tisa::model::make_relative_schemes("alibbi", tiny(true, "none"), 1);
    FAIL();
  } catch (const tisa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("none, shaw, tisa, rope"), std::string::npos) << e.what();
  }
}

TEST(Albert, MaskedPositionsMatchFullProjection) {
  torch::manual_seed(1);
  tisa::model::AlbertForPreTraining m(tiny(true, "shaw"));
  m->eval();
  auto b = batch();
  auto full = m->forward(b.ids, b.types, b.mask);
  auto pos = torch::tensor({1L, 4L, 9L + 2L, 9L + 5L});
  auto part = m->forward(b.ids, b.types, b.mask, pos);
  ASSERT_EQ(part.prediction_logits.sizes(), (torch::IntArrayRef{4, 50}));
  EXPECT_TRUE(close(part.prediction_logits, full.prediction_logits.view({-1, 50}).index_select(0, pos), 1e-6, 0, "logits"));
  auto labels = torch::full({2, 9}, -100L);
  labels[0][1] = 7;
  labels[1][5] = 9;
  auto t = tisa::model::masked_targets_from_labels(labels);
  EXPECT_TRUE(torch::equal(t.positions, torch::tensor({1L, 14L})));
  EXPECT_TRUE(torch::equal(t.labels, torch::tensor({7L, 9L})));
}

class RoundTrip : public ::testing::TestWithParam<int> {};

// training.position_span: sequence b reads the learned position rows offsets[b] … offsets[b]+L−1.
// Zero offsets give the unshifted forward bit for bit; an offset o gives what a table whose rows
// start at o gives unshifted; and the gradient reaches exactly the rows read.
TEST(Albert, ShiftedPositionsReadTheTableFromEachSequencesOffset) {
  auto c = tiny(true, "none");
  torch::manual_seed(3);
  tisa::model::AlbertModel m(c);
  m->eval();
  const auto ids = torch::randint(5, 50, {2, 7}, torch::kLong);
  const torch::Tensor none;  // token types 0, no padding
  tisa::model::ForwardOptions zero;
  zero.position_offsets = torch::zeros({2}, torch::kLong);
  EXPECT_TRUE(torch::equal(m->forward(ids, none, none).last_hidden_state, m->forward(ids, none, none, zero).last_hidden_state));

  tisa::model::ForwardOptions shifted;
  shifted.position_offsets = torch::tensor({5, 0}, torch::kLong);
  const auto out = m->forward(ids, none, none, shifted).last_hidden_state;
  const auto table = m->embeddings->position_embeddings->weight;
  {
    torch::NoGradGuard no_grad;
    auto original = table.clone();
    table.narrow(0, 0, 7).copy_(original.narrow(0, 5, 7));  // rows 5 … 11 moved to 0 … 6
    const auto moved = m->forward(ids, none, none).last_hidden_state;
    EXPECT_TRUE(close(out[0], moved[0], 1e-6, 1e-6, "sequence 0 against the moved table"));
    table.copy_(original);
  }
  EXPECT_TRUE(torch::equal(out[1], m->forward(ids, none, none).last_hidden_state[1]));

  m->train();
  m->forward(ids, none, none, shifted).last_hidden_state.pow(2).sum().backward();
  const auto touched = table.grad().abs().sum(1).gt(0);  // [P]
  for (int64_t row = 0; row < table.size(0); ++row)
    EXPECT_EQ(touched[row].item<bool>(), row < 12) << "row " << row;

  tisa::model::ForwardOptions outside;
  outside.position_offsets = torch::tensor({26, 0}, torch::kLong);  // 26 + 7 > 32 rows
  EXPECT_THROW(m->forward(ids, none, none, outside), c10::Error);
}

TEST_P(RoundTrip, SaveLoadGivesSameParametersAndOutputs) {
  const int which = GetParam();
  ModelConfig c = which == 0 ? tiny(true, "tisa")
                : which == 1 ? tiny(true, "shaw")
                : which == 2 ? tiny(false, "none")
                             : tiny(false, "tisa");
  if (which == 3) c.position.settings<tisa::model::TisaSettings>().per_layer = false;
  torch::manual_seed(2);
  tisa::model::AlbertForPreTraining m(c);
  m->eval();
  const auto dir = tisa::test::make_temp_dir("albert_rt");
  tisa::fs::write_file_atomic(dir + "/spiece_src_marker", "x");
  tisa::model::save_hf_model(dir + "/out", *m, c, tisa::model::kPretrainingArchitecture);
  auto loaded = tisa::model::load_hf_model(dir + "/out");
  ASSERT_TRUE(loaded.pretraining);
  const auto& lc = loaded.config.model.position;
  EXPECT_EQ(lc.absolute, c.position.absolute);
  EXPECT_EQ(lc.relative, c.position.relative);
  EXPECT_EQ(lc.settings<tisa::model::TisaSettings>().per_layer, c.position.settings<tisa::model::TisaSettings>().per_layer);
  auto a = tisa::model::state_dict(*m), b = tisa::model::state_dict(loaded.module());
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [n, t] : a) EXPECT_TRUE(torch::equal(t, b.at(n))) << n;
  loaded.module().eval();
  auto bt = batch();
  auto x = m->forward(bt.ids, bt.types, bt.mask), y = loaded.pretraining->forward(bt.ids, bt.types, bt.mask);
  EXPECT_TRUE(torch::equal(x.prediction_logits, y.prediction_logits));
  auto saved = tisa::model::load_tensor_file(dir + "/out/model.safetensors").tensors;
  for (const auto& [n, t] : saved) EXPECT_NE(n.rfind("predictions.decoder.", 0), 0u) << n;
}

INSTANTIATE_TEST_SUITE_P(Schemes, RoundTrip, ::testing::Values(0, 1, 2, 3));

TEST(Albert, HfRelativeKeyImportExport) {
  TISA_REQUIRE_SHARED("golden/hf_albert/pretraining_relative_key/config.json");
  const auto src = tisa::test::shared_path("golden/hf_albert/pretraining_relative_key");
  auto m = tisa::model::load_hf_model(src);
  const auto& shaw = m.config.model.position.settings<tisa::model::ShawSettings>();
  EXPECT_EQ(shaw.max_distance, 63);
  EXPECT_TRUE(shaw.per_attention_module);
  EXPECT_FALSE(shaw.values);
  // transformers 5 has no relative_key: the export is remote code carrying the position settings.
  const auto dir = tisa::test::make_temp_dir("albert_hfrk") + "/out";
  tisa::model::save_hf_model(dir, m.module(), m.config.model, m.config.architecture);
  auto j = nlohmann::json::parse(tisa::fs::read_file(dir + "/config.json"));
  EXPECT_EQ(j["model_type"], "tisa_albert");
  EXPECT_EQ(j["architectures"][0], "TisaAlbertForPreTraining");
  EXPECT_EQ(j["auto_map"]["AutoModelForPreTraining"], "modeling_tisa_albert.TisaAlbertForPreTraining");
  EXPECT_EQ(j["tisa_train"]["position"]["relative"], "shaw");
  EXPECT_FALSE(j.contains("position_embedding_type"));
  EXPECT_TRUE(tisa::test::file_exists(dir + "/modeling_tisa_albert.py"));
  EXPECT_TRUE(tisa::test::file_exists(dir + "/configuration_tisa_albert.py"));
  auto again = tisa::model::load_hf_model(dir);
  auto a = tisa::model::state_dict(m.module()), b = tisa::model::state_dict(again.module());
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [n, t] : a) EXPECT_TRUE(torch::equal(t, b.at(n))) << n;
}

TEST(Albert, RemoteCodeConfigWithoutPositionBlockIsRefused) {
  const auto dir = tisa::test::make_temp_dir("albert_nopos");
  tisa::fs::write_file_atomic(dir + "/config.json",
                              R"({"model_type": "tisa_albert", "architectures": ["TisaAlbertForPreTraining"]})");
  try {
    tisa::model::read_hf_config(dir);
    FAIL() << "a tisa_albert config without tisa_train was accepted";
  } catch (const tisa::Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find(dir + "/config.json"), std::string::npos) << w;
    EXPECT_NE(w.find("tisa_train"), std::string::npos) << w;
  }
  tisa::fs::write_file_atomic(dir + "/config.json", R"({"model_type": "bert"})");
  try {
    tisa::model::read_hf_config(dir);
    FAIL() << "model_type bert was accepted";
  } catch (const tisa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("model_type 'bert' is not supported"), std::string::npos) << e.what();
  }
}

TEST(Albert, ShawPerAttentionModuleIsSharedLikeTheLayerWeights) {
  auto c = tiny(false, "shaw");
  c.num_hidden_layers = 4;
  c.num_hidden_groups = 2;
  c.inner_group_num = 2;
  c.position.settings<tisa::model::ShawSettings>().per_layer = false;
  c.position.settings<tisa::model::ShawSettings>().per_attention_module = true;
  tisa::model::AlbertForPreTraining m(c);
  auto& enc = m->albert->encoder;
  ASSERT_EQ(enc->schemes.size(), 4u);  // groups × inner layers, as HF relative_key's distance tables
  // Layers 0, 1 use group 0 and layers 2, 3 group 1; inner layer j uses module group · 2 + j.
  for (int64_t layer = 0; layer < 4; ++layer)
    for (int64_t inner = 0; inner < 2; ++inner)
      EXPECT_EQ(enc->scheme_for(layer, inner), enc->schemes[(layer / 2) * 2 + inner].get()) << layer << "," << inner;
  // keys and values, per attention module
  EXPECT_EQ(tisa::model::positional_parameter_count(c), 4 * 2 * (2 * c.position.settings<tisa::model::ShawSettings>().max_distance + 1) * (c.hidden_size / c.num_attention_heads));
  c.position.settings<tisa::model::ShawSettings>().per_layer = true;
  EXPECT_THROW(tisa::model::AlbertForPreTraining{c}, tisa::Error);
}

TEST(Albert, StrictLoadingNamesTensors) {
  torch::manual_seed(0);
  auto c = tiny(true, "none");
  tisa::model::AlbertForPreTraining m(c);
  auto sd = tisa::model::state_dict(*m);
  tisa::model::TensorMap bad;
  for (auto& [n, t] : sd) bad[n] = t.clone();
  bad.erase("albert.pooler.bias");
  bad["albert.encoder.extra.weight"] = torch::zeros({2});
  try {
    tisa::model::load_state_dict(*m, bad, "ckpt.safetensors");
    FAIL();
  } catch (const tisa::Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("missing tensor 'albert.pooler.bias'"), std::string::npos) << w;
    EXPECT_NE(w.find("unknown tensor 'albert.encoder.extra.weight'"), std::string::npos) << w;
    EXPECT_NE(w.find("ckpt.safetensors"), std::string::npos) << w;
  }
}

TEST(Albert, ClassificationFromPretrainingCheckpoint) {
  torch::manual_seed(0);
  auto c = tiny(true, "tisa");
  tisa::model::AlbertForPreTraining m(c);
  const auto dir = tisa::test::make_temp_dir("albert_cls") + "/pt";
  tisa::model::save_hf_model(dir, *m, c, tisa::model::kPretrainingArchitecture);
  auto cls = tisa::model::load_for_classification(dir, 3, tisa::model::MissingHead::kCreate);
  EXPECT_TRUE(torch::equal(cls->albert->encoder->schemes[5]->parameters()[0], m->albert->encoder->schemes[5]->parameters()[0]));
  auto b = batch();
  auto out = cls->forward(b.ids, b.types, b.mask);
  EXPECT_EQ(out.logits.sizes(), (torch::IntArrayRef{2, 3}));
  auto loss = tisa::model::classification_loss(out.logits, torch::tensor({0L, 2L}));
  loss.backward();
  EXPECT_TRUE(cls->classifier->weight.grad().defined());
}

TEST(Albert, Bf16AutocastForward) {
  torch::manual_seed(4);
  auto c = tiny(true, "shaw");
  tisa::model::AlbertForPreTraining m(c);
  m->eval();
  torch::NoGradGuard ng;
  auto b = batch();
  auto ref = m->forward(b.ids, b.types, b.mask);
  torch::Tensor h;
  {
    tisa::model::AutocastScope scope(torch::kCPU, true);
    auto x = torch::linear(torch::randn({2, 3}), torch::randn({4, 3}));
    EXPECT_EQ(x.scalar_type(), torch::kBFloat16);
    h = m->forward(b.ids, b.types, b.mask).encoder.last_hidden_state;
  }
  EXPECT_EQ(torch::linear(torch::randn({2, 3}), torch::randn({4, 3})).scalar_type(), torch::kFloat);  // restored
  EXPECT_TRUE(close(h.to(torch::kFloat), ref.encoder.last_hidden_state, 0.1, 0.05, "bf16 vs fp32"));
}

}  // namespace

namespace {

// Issue 18, class 4: a folder without a trained classifier head (a pretraining checkpoint) is
// refused where a head must be trained (eval, predict); only fine-tuning may create one.
TEST(Albert, MissingClassifierHeadIsRefusedUnlessCreated) {
  auto c = tiny(false, "tisa");
  tisa::model::AlbertForPreTraining m(c);
  const auto dir = tisa::test::make_temp_dir("albert_head") + "/final";
  tisa::model::save_hf_model(dir, *m, c, tisa::model::kPretrainingArchitecture);
  try {
    tisa::model::load_for_classification(dir, 2, tisa::model::MissingHead::kRefuse);
    FAIL() << "a random head was created for evaluation";
  } catch (const tisa::Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir + " holds no trained classifier head (config.json: AlbertForPreTraining)"),
              std::string::npos)
        << e.what();
  }
  auto cls = tisa::model::load_for_classification(dir, 2, tisa::model::MissingHead::kCreate);
  const auto tuned = tisa::test::make_temp_dir("albert_head") + "/tuned";
  tisa::model::save_hf_model(tuned, *cls, c, tisa::model::kClassificationArchitecture, 2);
  tisa::model::load_for_classification(tuned, 2, tisa::model::MissingHead::kRefuse);  // a trained head: fine
}

// Issue 18, classes 5 and 8: a NaN/Inf weight or a weight stored as BOOL/I64 is an error naming
// the tensor, never silently loaded (or cast) and run.
TEST(Albert, NonFiniteOrIntegerWeightsAreRefused) {
  auto c = tiny(true, "none");
  tisa::model::AlbertForPreTraining m(c);
  const auto dir = tisa::test::make_temp_dir("albert_nan") + "/m";
  tisa::model::save_hf_model(dir, *m, c, tisa::model::kPretrainingArchitecture);
  auto file = tisa::model::load_tensor_file(dir + "/model.safetensors");
  const std::string name = "albert.encoder.embedding_hidden_mapping_in.weight";
  ASSERT_TRUE(file.tensors.count(name));
  auto original = file.tensors[name].clone();
  file.tensors[name][0][0] = std::nanf("");
  file.tensors[name][1][1] = std::numeric_limits<float>::infinity();
  tisa::model::save_tensor_file(dir + "/model.safetensors", file.tensors);
  try {
    tisa::model::load_hf_model(dir);
    FAIL() << "NaN weights loaded";
  } catch (const tisa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor '" + name + "' has 1 NaN and 1 Inf values"), std::string::npos)
        << e.what();
  }
  file.tensors[name] = original.to(torch::kBool);
  tisa::model::save_tensor_file(dir + "/model.safetensors", file.tensors);
  try {
    tisa::model::load_hf_model(dir);
    FAIL() << "a BOOL weight was cast to float";
  } catch (const tisa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor '" + name + "' has dtype Bool, a weight must be floating point"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
