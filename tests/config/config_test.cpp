// Config loader (with the real position schemes, installed by the test main): defaults, inheritance, overrides, dump/reload, JSON, and every kind of bad input
// with the message checked (file, line:column, key path, what was expected).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/fs.h"
#include "config/config_loader.h"
#include "model/position/shaw.h"
#include "model/position/tisa.h"
#include "support/expect_error.h"
#include "support/test_paths.h"

using tisa::config::Config;
using tisa::config::load_config;

namespace {

std::string write(const std::string& dir, const std::string& name, const std::string& text) {
  std::string path = dir + "/" + name;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
  return path;
}

using tisa::test::error_of;

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

}  // namespace

TEST(ConfigTest, DefaultsMatchConfigH) {
  Config c = tisa::config::default_config();
  EXPECT_EQ(c.model.hidden_size, 768);
  EXPECT_EQ(c.model.position.settings<tisa::model::TisaSettings>().kernels, 5);
  EXPECT_EQ(c.optimizer.type, tisa::config::OptimizerType::kLamb);
  EXPECT_TRUE(tisa::config::validate(c).empty());
}

TEST(ConfigTest, EmptyFileGivesDefaults) {
  auto dir = tisa::test::make_temp_dir("cfg");
  Config c = load_config(write(dir, "empty.yaml", "# nothing\n"));
  EXPECT_EQ(tisa::config::dump_yaml(c), tisa::config::dump_yaml(Config{}));
}

TEST(ConfigTest, LoadsTypedValuesAndEnums) {
  auto dir = tisa::test::make_temp_dir("cfg");
  Config c = load_config(write(dir, "a.yaml",
                               "model:\n  hidden_size: 256\n  num_attention_heads: 4\n  layer_norm_eps: 1e-6\n"
                               "  position:\n    absolute: false\n    relative: tisa\n    tisa: {kernels: 3}\n"
                               "optimizer:\n  type: adamw\n  lr: 2e-5\n"
                               "training: {device: cuda, precision: bf16, steps: 10}\n"));
  EXPECT_EQ(c.model.hidden_size, 256);
  EXPECT_EQ(c.model.num_attention_heads, 4);
  EXPECT_DOUBLE_EQ(c.model.layer_norm_eps, 1e-6);
  EXPECT_FALSE(c.model.position.absolute);
  EXPECT_EQ(c.model.position.relative, "tisa");
  EXPECT_EQ(c.model.position.settings<tisa::model::TisaSettings>().kernels, 3);
  EXPECT_EQ(c.optimizer.type, tisa::config::OptimizerType::kAdamW);
  EXPECT_DOUBLE_EQ(c.optimizer.lr, 2e-5);
  EXPECT_EQ(c.training.device, tisa::config::Device::kCuda);
  EXPECT_EQ(c.training.precision, tisa::config::Precision::kBf16);
  EXPECT_EQ(c.model.embedding_size, 128);  // untouched default
}

TEST(ConfigTest, TwoLevelInheritanceChildWinsDeepMerge) {
  auto dir = tisa::test::make_temp_dir("cfg");
  write(dir, "model/base.yaml",
        "model:\n  hidden_size: 512\n  num_attention_heads: 8\n  position: {relative: shaw, shaw: {max_distance: 8}}\n");
  write(dir, "pretrain/mid.yaml",
        "base: ../model/base.yaml\nmodel:\n  position: {shaw: {values: false}}\ntraining: {steps: 50}\n"
        "data: {dataset: ../data/ds}\n");
  std::string leaf = write(dir, "exp/leaf.yaml", "base: ../pretrain/mid.yaml\nmodel: {hidden_size: 256}\n");
  Config c = load_config(leaf);
  EXPECT_EQ(c.model.hidden_size, 256);                 // leaf wins
  EXPECT_EQ(c.model.num_attention_heads, 8);           // from the base
  EXPECT_EQ(c.model.position.relative, "shaw");
  EXPECT_EQ(c.model.position.settings<tisa::model::ShawSettings>().max_distance, 8);    // deep merge keeps the base's sibling
  EXPECT_FALSE(c.model.position.settings<tisa::model::ShawSettings>().values);          // from mid
  EXPECT_EQ(c.training.steps, 50);
  // Relative paths are resolved against the folder of the file that set them (mid.yaml).
  EXPECT_EQ(c.data.dataset, (std::filesystem::path(dir) / "data/ds").lexically_normal().string());
}

TEST(ConfigTest, AbsoluteDatasetPathKept) {
  auto dir = tisa::test::make_temp_dir("cfg");
  Config c = load_config(write(dir, "a.yaml", "data: {dataset: /abs/ds}\n"));
  EXPECT_EQ(c.data.dataset, "/abs/ds");
}

TEST(ConfigTest, OverridesWinOverYamlAndPassValidation) {
  auto dir = tisa::test::make_temp_dir("cfg");
  std::string path = write(dir, "a.yaml", "model: {hidden_size: 512, num_attention_heads: 8}\n");
  Config c = load_config(path, {"model.hidden_size=256", "model.position.relative=tisa",
                                "model.position.tisa.kernels=7", "data.dataset=rel/ds", "optimizer.lr=1e-3"});
  EXPECT_EQ(c.model.hidden_size, 256);
  EXPECT_EQ(c.model.position.relative, "tisa");
  EXPECT_EQ(c.model.position.settings<tisa::model::TisaSettings>().kernels, 7);
  EXPECT_EQ(c.data.dataset, "rel/ds");  // --set paths stay relative to the working directory
  EXPECT_DOUBLE_EQ(c.optimizer.lr, 1e-3);
  // A later --set of the same key wins; a whole section as a flow map merges.
  c = load_config(path, {"model.hidden_size=128", "model.hidden_size=64", "model.position={relative: shaw}"});
  EXPECT_EQ(c.model.hidden_size, 64);
  EXPECT_EQ(c.model.position.relative, "shaw");
  // Overrides go through validation: 100 % 8 != 0.
  std::string msg = error_of([&] { load_config(path, {"model.hidden_size=100"}); });
  EXPECT_HAS(msg, "--set model.hidden_size=100: model.hidden_size: must be divisible by model.num_attention_heads (8)");
  // And through type checks.
  msg = error_of([&] { load_config(path, {"model.hidden_size=big"}); });
  EXPECT_HAS(msg, "--set model.hidden_size=big: model.hidden_size: expected an integer, got 'big'");
}

TEST(ConfigTest, ConfigFromOverridesOnly) {
  Config c = tisa::config::config_from_overrides({"training.steps=7"});
  EXPECT_EQ(c.training.steps, 7);
}

TEST(ConfigTest, PositionSpanMustHoldTheSequenceAndFitTheTable) {
  using tisa::config::config_from_overrides;
  EXPECT_EQ(config_from_overrides({"data.max_seq_length=32", "training.position_span=128"}).training.position_span,
            128);
  std::string msg = error_of([] { config_from_overrides({"data.max_seq_length=64", "training.position_span=32"}); });
  EXPECT_HAS(msg, "training.position_span");
  EXPECT_HAS(msg, "between data.max_seq_length (64)");
  msg = error_of([] { config_from_overrides({"training.position_span=600"}); });
  EXPECT_HAS(msg, "model.max_position_embeddings (512), got 600");
}

TEST(ConfigTest, BadOverrideSyntax) {
  for (std::string bad : {"model.hidden_size", "=3", "model..hidden_size=3", ".x=1", "model.=2"}) {
    std::string msg = error_of([&] { tisa::config::config_from_overrides({bad}); });
    EXPECT_HAS(msg, "bad --set '" + bad + "': expected KEY=VALUE");
  }
  std::string msg = error_of([&] { tisa::config::config_from_overrides({"model.hidden_size=[1"}); });
  EXPECT_HAS(msg, "value is not valid YAML");
}

TEST(ConfigTest, OverrideUnknownKey) {
  std::string msg = error_of([] { tisa::config::config_from_overrides({"model.hiden_size=3"}); });
  EXPECT_HAS(msg, "--set model.hiden_size=3: model.hiden_size: unknown key (did you mean 'hidden_size'?)");
  EXPECT_HAS(msg, "known keys of model: vocab_size, embedding_size, hidden_size");
  msg = error_of([] { tisa::config::config_from_overrides({"model.position.tisa.kernals=3"}); });
  EXPECT_HAS(msg, "model.position.tisa.kernals: unknown key (did you mean 'kernels'?)");
  msg = error_of([] { tisa::config::config_from_overrides({"modle.hidden_size=3"}); });
  EXPECT_HAS(msg, "modle: unknown key (did you mean 'model'?); known keys of the top level: model, data");
  msg = error_of([] { tisa::config::config_from_overrides({"model.hidden_size.x=3"}); });
  EXPECT_HAS(msg, "model.hidden_size is a value, not a section");
}

TEST(ConfigTest, UnknownKeyNamesFileLineKeyAndSuggestion) {
  auto dir = tisa::test::make_temp_dir("cfg");
  std::string path = write(dir, "a.yaml", "model:\n  hidden_size: 64\n  num_attention_heads: 4\n  hiden_size: 3\n");
  std::string msg = error_of([&] { load_config(path); });
  EXPECT_HAS(msg, path + ":4:3: model.hiden_size: unknown key (did you mean 'hidden_size'?)");
  EXPECT_HAS(msg, "known keys of model: vocab_size, embedding_size, hidden_size, num_hidden_layers");
}

TEST(ConfigTest, UnknownNestedKey) {
  auto dir = tisa::test::make_temp_dir("cfg");
  std::string path = write(dir, "a.yaml", "model:\n  position:\n    tisa:\n      kernel: 3\n");
  std::string msg = error_of([&] { load_config(path); });
  EXPECT_HAS(msg, path + ":4:7: model.position.tisa.kernel: unknown key (did you mean 'kernels'?)");
  EXPECT_HAS(msg, "known keys of model.position.tisa: kernels, per_layer, init_offset_std");
  // Unknown section at the top level, no close match.
  path = write(dir, "b.yaml", "zzzzzz: {a: 1}\n");
  msg = error_of([&] { load_config(path); });
  EXPECT_HAS(msg, path + ":1:1: zzzzzz: unknown key; known keys of the top level: model, data, optimizer");
}

TEST(ConfigTest, WrongTypes) {
  auto dir = tisa::test::make_temp_dir("cfg");
  std::string path = write(dir, "a.yaml",
                           "model:\n"
                           "  hidden_size: abc\n"           // string for int
                           "  num_hidden_layers: 2.5\n"     // float for int
                           "  vocab_size: \"300\"\n"        // quoted string for int
                           "  layer_norm_eps: tiny\n"       // string for float
                           "  position:\n"
                           "    absolute: yes\n"            // non-bool
                           "    shaw: 3\n"                  // scalar for a section
                           "  hidden_act: [a, b]\n"         // list for a choice
                           "training:\n  deterministic: 1\n");
  std::string msg = error_of([&] { load_config(path); });
  EXPECT_HAS(msg, path + ":2:16: model.hidden_size: expected an integer, got 'abc'");
  EXPECT_HAS(msg, path + ":3:22: model.num_hidden_layers: expected an integer, got the floating-point number 2.5");
  EXPECT_HAS(msg, path + ":4:15: model.vocab_size: expected an integer, got the string \"300\"");
  EXPECT_HAS(msg, path + ":5:19: model.layer_norm_eps: expected a number, got 'tiny'");
  EXPECT_HAS(msg, path + ":7:15: model.position.absolute: expected true or false, got 'yes'");
  EXPECT_HAS(msg, path + ":8:11: model.position.shaw: expected a section (a mapping of keys), got '3'");
  EXPECT_HAS(msg, path + ":9:15: model.hidden_act: unknown value a list (expected one of: gelu_new, gelu, relu");
  EXPECT_HAS(msg, ":11:18: training.deterministic: expected true or false, got '1'");
  // All problems in one message.
  EXPECT_EQ(std::count(msg.begin(), msg.end(), '\n'), 7);
}

TEST(ConfigTest, UnknownEnumValueListsChoices) {
  auto dir = tisa::test::make_temp_dir("cfg");
  std::string path = write(dir, "a.yaml", "model:\n  position:\n    relative: tisaa\n");
  std::string msg = error_of([&] { load_config(path); });
  // The names are the installed schemes' (model/position/registry.cpp), in table order.
  EXPECT_HAS(msg, path + ":3:15: model.position.relative: unknown value 'tisaa' (expected one of: none, shaw, tisa, rope, alibi, t5, ");
  EXPECT_HAS(msg, "(expected one of: " + join(tisa::config::position_scheme_names(), ", ") + "); did you mean 'tisa'?");
  msg = error_of([] { tisa::config::config_from_overrides({"optimizer.type=sgd"}); });
  EXPECT_HAS(msg, "optimizer.type: unknown value 'sgd' (expected one of: lamb, adamw)");
}

TEST(ConfigTest, OutOfRangeReportsAllProblems) {
  auto dir = tisa::test::make_temp_dir("cfg");
  std::string path = write(dir, "a.yaml",
                           "model:\n"
                           "  hidden_size: 100\n"
                           "  num_attention_heads: 12\n"
                           "  num_hidden_layers: 12\n"
                           "  num_hidden_groups: 5\n"
                           "  hidden_dropout_prob: 1.0\n"
                           "  embedding_size: 0\n"
                           "  position: {tisa: {kernels: 0}, shaw: {max_distance: 0}}\n"
                           "training: {batch_size: 0}\n"
                           "optimizer: {beta2: -0.1}\n"
                           "data: {max_seq_length: 1024}\n");
  std::string msg = error_of([&] { load_config(path); });
  EXPECT_HAS(msg, path + ":2:16: model.hidden_size: must be divisible by model.num_attention_heads (12), got 100");
  EXPECT_HAS(msg, path + ":4:22: model.num_hidden_layers: must be divisible by model.num_hidden_groups (5), got 12");
  EXPECT_HAS(msg, path + ":6:24: model.hidden_dropout_prob: must be in [0, 1), got 1.0");
  EXPECT_HAS(msg, path + ":7:19: model.embedding_size: must be >= 1, got 0");
  EXPECT_HAS(msg, "model.position.tisa.kernels: must be >= 1, got 0");
  EXPECT_HAS(msg, "model.position.shaw.max_distance: must be >= 1, got 0");
  EXPECT_HAS(msg, "training.batch_size: must be >= 1, got 0");
  EXPECT_HAS(msg, "optimizer.beta2: must be in [0, 1), got -0.1");
  EXPECT_HAS(msg, "data.max_seq_length: must be <= model.max_position_embeddings (512), got 1024");
  EXPECT_EQ(std::count(msg.begin(), msg.end(), '\n'), 8);
}

TEST(ConfigTest, ValidateCrossFieldRules) {
  Config c;
  c.model.num_hidden_groups = 13;
  c.model.pad_token_id = 30000;
  c.glue.max_length = 600;
  c.glue.steps = 0;
  c.glue.epochs = 0;
  auto problems = tisa::config::validate(c);
  std::vector<std::string> keys;
  for (const auto& p : problems) keys.push_back(p.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"model.num_hidden_groups", "model.pad_token_id", "glue.epochs",
                                            "glue.max_length"}));
  std::string msg = error_of([&] { tisa::config::validate_or_throw(c, "run.yaml"); });
  EXPECT_HAS(error_of([] { tisa::config::config_from_overrides({"glue.task=SST"}); }),
             "--set glue.task=SST: glue.task: unknown GLUE task 'SST' (expected one of: CoLA, SST-2, MRPC");
  EXPECT_EQ(tisa::config::config_from_overrides({"glue.task=sst2"}).glue.task, "sst2");
  EXPECT_HAS(msg, "run.yaml: model.pad_token_id: must be in [0, model.vocab_size), got 30000");
}

// hidden_act is an enum with Hugging Face's names, checked where it is read (one name table).
TEST(ConfigTest, HiddenActIsAChoiceOfHuggingFaceNames) {
  std::string msg = error_of([] { tisa::config::config_from_overrides({"model.hidden_act=swish"}); });
  EXPECT_HAS(msg, "--set model.hidden_act=swish: model.hidden_act: unknown value 'swish' (expected one of: gelu_new, "
                  "gelu, relu, gelu_pytorch_tanh)");
  EXPECT_EQ(tisa::config::config_from_overrides({"model.hidden_act=relu"}).model.hidden_act,
            tisa::config::HiddenAct::kRelu);
  EXPECT_EQ(tisa::config::model_config_to_json(tisa::config::ModelConfig{})["hidden_act"], "gelu_new");
}

TEST(ConfigTest, MissingFile) {
  std::string msg = error_of([] { load_config("/nonexistent/dir/cfg.yaml"); });
  EXPECT_HAS(msg, "config file '/nonexistent/dir/cfg.yaml' does not exist");
  auto dir = tisa::test::make_temp_dir("cfg");
  std::string path = write(dir, "a.yaml", "model: {}\nbase: nothere.yaml\n");
  msg = error_of([&] { load_config(path); });
  EXPECT_HAS(msg, path + ":2:7: base: config file '" + dir + "/nothere.yaml' does not exist");
}

TEST(ConfigTest, YamlSyntaxError) {
  auto dir = tisa::test::make_temp_dir("cfg");
  std::string path = write(dir, "a.yaml", "model:\n  hidden_size: [1, 2\n");
  std::string msg = error_of([&] { load_config(path); });
  EXPECT_HAS(msg, path + ":");
  EXPECT_HAS(msg, ": YAML syntax error: ");
  path = write(dir, "b.yaml", "model: 3\n  x: 4\n");
  msg = error_of([&] { load_config(path); });
  EXPECT_HAS(msg, path + ":2:");
  EXPECT_HAS(msg, "YAML syntax error");
  path = write(dir, "c.yaml", "- a\n- b\n");
  msg = error_of([&] { load_config(path); });
  EXPECT_HAS(msg, path + ":1:1: expected a mapping of sections");
  path = write(dir, "d.yaml", "model: {hidden_size: 1}\nmodel: {hidden_size: 2}\n");
  msg = error_of([&] { load_config(path); });
  EXPECT_HAS(msg, path + ":2:1: duplicate key 'model'");
}

TEST(ConfigTest, InheritanceCycleIsPrinted) {
  auto dir = tisa::test::make_temp_dir("cfg");
  std::string a = write(dir, "a.yaml", "base: b.yaml\n");
  write(dir, "b.yaml", "base: sub/c.yaml\n");
  write(dir, "sub/c.yaml", "base: ../a.yaml\n");
  std::string msg = error_of([&] { load_config(a); });
  EXPECT_HAS(msg, "inheritance cycle: " + a + " -> " + dir + "/b.yaml -> " + dir + "/sub/c.yaml -> " + a);
  EXPECT_HAS(msg, dir + "/sub/c.yaml:1:7: base:");
  std::string self = write(dir, "self.yaml", "base: self.yaml\n");
  msg = error_of([&] { load_config(self); });
  EXPECT_HAS(msg, "inheritance cycle: " + self + " -> " + self);
}

TEST(ConfigTest, DumpReloadsToTheSameConfig) {
  auto dir = tisa::test::make_temp_dir("cfg");
  Config c = tisa::config::config_from_overrides(
      {"model.hidden_size=256", "model.num_attention_heads=4", "model.position.relative=shaw",
       "optimizer.lr=0.1", "data.dataset=some dir/with \"quotes\"", "model.layer_norm_eps=1e-12"});
  std::string yaml = tisa::config::dump_yaml(c);
  EXPECT_HAS(yaml, "  hidden_size: 256  # hidden size H\n");
  EXPECT_HAS(yaml, "    relative: shaw  #");
  EXPECT_HAS(yaml, "  lr: 0.1  #");
  std::string path = dir + "/resolved.yaml";
  tisa::config::write_resolved_config(c, path);
  Config back = load_config(path);
  EXPECT_EQ(back.data.dataset, dir + "/some dir/with \"quotes\"");  // resolved against the dump's folder
  back.data.dataset = c.data.dataset;
  EXPECT_EQ(tisa::config::dump_yaml(back), yaml);
  EXPECT_EQ(back.model.layer_norm_eps, 1e-12);
}

TEST(ConfigTest, DescribeDefaultsListsEveryKey) {
  std::string text = tisa::config::describe_defaults();
  EXPECT_HAS(text, "model.position.tisa.kernels");
  EXPECT_HAS(text, "int = 5");
  EXPECT_HAS(text, "model.position.relative");
  EXPECT_HAS(text, "{none|shaw|tisa|rope|alibi|t5|");
  EXPECT_HAS(text, "{" + join(tisa::config::position_scheme_names(), "|") + "} = none");
  EXPECT_HAS(text, "{per_layer|per_module|model} = per_layer");
  EXPECT_HAS(text, "glue.eval_batch_size");
  EXPECT_HAS(text, "glue.group_by_length");
  EXPECT_HAS(text, "schedule.total_steps");
  // model, position (absolute, relative, sharing and each installed scheme's settings), data,
  // optimizer, schedule, training, glue
  size_t position_keys = 0;
  for (const auto& [key, value] : tisa::config::flatten_model_config(tisa::config::ModelConfig{}))
    if (key.rfind("model.position.", 0) == 0) ++position_keys;
  EXPECT_GE(position_keys, 3u + 4 + 7 + 1 + 2 + 3);  // shaw, tisa, rope, t5 and fire at least
  EXPECT_EQ(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')),
            17 + position_keys + 11 + 11 + 4 + 17 + 15);
}

TEST(ConfigTest, ModelConfigJsonRoundTrip) {
  tisa::config::ModelConfig m;
  m.hidden_size = 64;
  m.num_attention_heads = 2;
  m.position.relative = "tisa";
  m.layer_norm_eps = 1e-12;
  nlohmann::json j = tisa::config::model_config_to_json(m);
  EXPECT_EQ(j["position"]["relative"], "tisa");
  EXPECT_EQ(j["hidden_size"], 64);
  tisa::config::ModelConfig back = tisa::config::model_config_from_json(j, "config.json");
  EXPECT_EQ(tisa::config::model_config_to_json(back), j);
  j["position"]["tisa"]["kernelz"] = 3;
  j["hidden_size"] = "64";
  std::string msg = error_of([&] { tisa::config::model_config_from_json(j, "ckpt/config.json"); });
  EXPECT_HAS(msg, "ckpt/config.json: model.position.tisa.kernelz: unknown key (did you mean 'kernels'?)");
  EXPECT_HAS(msg, "ckpt/config.json: model.hidden_size: expected an integer, got the string \"64\"");
  // Missing keys keep defaults; validation applies.
  msg = error_of([&] { tisa::config::model_config_from_json({{"hidden_size", 100}}, "c.json"); });
  EXPECT_HAS(msg, "c.json: model.hidden_size: must be divisible by model.num_attention_heads (12), got 100");
}

TEST(ConfigTest, EveryYamlUnderConfigsLoads) {
  const std::string root = tisa::test::source_dir() + "/configs";
  int loaded = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".yaml") continue;
    if (entry.path().filename().string().find("template") != std::string::npos) continue;
    SCOPED_TRACE(entry.path().string());
    EXPECT_NO_THROW({
      try {
        load_config(entry.path().string());
      } catch (const tisa::Error& e) {
        ADD_FAILURE() << e.what();
      }
    });
    ++loaded;
  }
  EXPECT_GE(loaded, 5);
}

TEST(ConfigTest, ReleasedSizes) {
  const std::string dir = tisa::test::source_dir() + "/configs/model/";
  struct Size { const char* name; int64_t h, l, a, i; };
  for (Size s : {Size{"base", 768, 12, 12, 3072}, Size{"large", 1024, 24, 16, 4096},
                 Size{"xlarge", 2048, 24, 16, 8192}, Size{"xxlarge", 4096, 12, 64, 16384}}) {
    Config c = load_config(dir + "albert-" + s.name + ".yaml");
    EXPECT_EQ(c.model.hidden_size, s.h) << s.name;
    EXPECT_EQ(c.model.num_hidden_layers, s.l) << s.name;
    EXPECT_EQ(c.model.num_attention_heads, s.a) << s.name;
    EXPECT_EQ(c.model.intermediate_size, s.i) << s.name;
    EXPECT_EQ(c.model.vocab_size, 30000);
    EXPECT_EQ(c.model.embedding_size, 128);
    EXPECT_EQ(c.model.max_position_embeddings, 512);
  }
  Config tiny = load_config(dir + "albert-tiny.yaml");
  EXPECT_EQ(tiny.model.hidden_size, 64);
  EXPECT_EQ(tiny.model.num_hidden_layers, 2);
}

// Issue 18, class 7: absurd thread counts are config errors naming the key (data.workers=100000
// used to abort the process while creating the threads).
TEST(ConfigTest, AbsurdThreadCountsAreRefused) {
  std::string msg = error_of([] { tisa::config::config_from_overrides({"data.workers=100000"}); });
  EXPECT_HAS(msg, "data.workers: must be <= 1024 (threads that build batches), got 100000");
  msg = error_of([] { tisa::config::config_from_overrides({"training.threads=5000"}); });
  EXPECT_HAS(msg, "training.threads: must be <= 1024");
  EXPECT_EQ(tisa::config::config_from_overrides({"data.workers=8"}).data.workers, 8);
}
