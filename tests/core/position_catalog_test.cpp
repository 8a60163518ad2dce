// The config library knows no position scheme (issue 15): a scheme installed through the catalog
// (config/position_settings.h) brings its name and its settings section, and loading, unknown-key
// errors, --set, validation, dumping, the key table and JSON all follow, with no edit of src/config/.
// Torch-free: a dummy scheme stands in for the model library's table.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "config/config_loader.h"
#include "support/expect_error.h"
#include "support/test_paths.h"

namespace {

using tisa::test::error_of;
namespace config = tisa::config;

// What a scheme's header declares (compare model/position/rope.h).
struct DummySettings {
  static constexpr const char* kName = "dummy";
  int64_t width = 3;
  double scale = 1.0;
  void visit(config::FieldVisitor& v) {
    v.field("width", width, "how wide");
    v.field("scale", scale, "how much");
  }
  void validate(const config::ModelConfig& m, bool selected, config::SettingsProblems& p) const {
    p.at_least("width", width, 1);
    if (selected && width > m.num_attention_heads)
      p.add_key("model.position.relative", "dummy needs width <= num_attention_heads");
  }
};

// Installs {none, dummy, plain} for one test and restores the default table ({none}) after it.
class PositionCatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config::install_position_schemes(
        {{"none", nullptr}, {"dummy", config::make_settings<DummySettings>}, {"plain", nullptr}});
  }
  void TearDown() override { config::install_position_schemes({{"none", nullptr}}); }
  std::string write(const std::string& text) {
    dir_ = tisa::test::make_temp_dir("catalog");
    std::string path = dir_ + "/a.yaml";
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

TEST_F(PositionCatalogTest, ListsInstalledNamesAndHoldsDefaults) {
  EXPECT_EQ(config::position_scheme_names(), (std::vector<std::string>{"none", "dummy", "plain"}));
  EXPECT_NE(config::find_position_scheme("plain"), nullptr);
  EXPECT_EQ(config::find_position_scheme("tisa"), nullptr);
  config::Config c;
  EXPECT_EQ(c.model.position.settings<DummySettings>().width, 3);
  EXPECT_EQ(c.model.position.all_settings().size(), 1u);  // plain has no settings
}

TEST_F(PositionCatalogTest, LoadsTheSchemeSectionAndOverrides) {
  std::string path = write("model:\n  position:\n    relative: dummy\n    dummy: {width: 5}\n");
  config::Config c = config::load_config(path, {"model.position.dummy.scale=2.5"});
  EXPECT_EQ(c.model.position.relative, "dummy");
  EXPECT_EQ(c.model.position.settings<DummySettings>().width, 5);
  EXPECT_EQ(c.model.position.settings<DummySettings>().scale, 2.5);
  // A copy is deep.
  config::Config copy = c;
  copy.model.position.settings<DummySettings>().width = 7;
  EXPECT_EQ(c.model.position.settings<DummySettings>().width, 5);
}

TEST_F(PositionCatalogTest, UnknownKeyUnderTheSchemeNamesFileLineAndKnownKeys) {
  std::string path = write("model:\n  position:\n    dummy:\n      widht: 3\n");
  std::string msg = error_of([&] { config::load_config(path); });
  EXPECT_HAS(msg, path + ":4:7: model.position.dummy.widht: unknown key (did you mean 'width'?); "
                         "known keys of model.position.dummy: width, scale");
  msg = error_of([] { config::config_from_overrides({"model.position.dummy.sclae=1"}); });
  EXPECT_HAS(msg, "model.position.dummy.sclae: unknown key (did you mean 'scale'?)");
  // A scheme without settings has no section.
  msg = error_of([] { config::config_from_overrides({"model.position.plain.x=1"}); });
  EXPECT_HAS(msg, "model.position.plain: unknown key");
}

TEST_F(PositionCatalogTest, UnknownSchemeListsTheInstalledNames) {
  std::string path = write("model:\n  position:\n    relative: dummmy\n");
  std::string msg = error_of([&] { config::load_config(path); });
  EXPECT_HAS(msg, path + ":3:15: model.position.relative: unknown value 'dummmy' (expected one of: none, dummy, "
                         "plain); did you mean 'dummy'?");
}

TEST_F(PositionCatalogTest, TheSchemeValidatesItsOwnSettings) {
  std::string msg = error_of([] { config::config_from_overrides({"model.position.dummy.width=0"}); });
  EXPECT_HAS(msg, "model.position.dummy.width: must be >= 1, got 0");
  // Rules for the selected scheme only.
  EXPECT_NO_THROW(config::config_from_overrides({"model.position.dummy.width=20"}));
  msg = error_of([] {
    config::config_from_overrides({"model.position.dummy.width=20", "model.position.relative=dummy"});
  });
  EXPECT_HAS(msg, "model.position.relative: dummy needs width <= num_attention_heads");
}

TEST_F(PositionCatalogTest, DumpDescribeAndJsonIncludeTheSection) {
  config::Config c = config::config_from_overrides({"model.position.relative=dummy", "model.position.dummy.width=4"});
  const std::string yaml = config::dump_yaml(c);
  EXPECT_HAS(yaml, "    dummy:  # settings of the dummy scheme\n      width: 4  # how wide\n");
  EXPECT_HAS(config::describe_defaults(), "{none|dummy|plain} = none");
  EXPECT_HAS(config::describe_defaults(), "model.position.dummy.scale");
  nlohmann::json j = config::model_config_to_json(c.model);
  EXPECT_EQ(j["position"]["dummy"]["width"], 4);
  config::ModelConfig back = config::model_config_from_json(j, "c.json");
  EXPECT_EQ(back.position.settings<DummySettings>().width, 4);
  j["position"]["dummy"]["depth"] = 1;
  EXPECT_HAS(error_of([&] { config::position_config_from_json(j["position"], "x/config.json", "tisa_train.position"); }),
             "x/config.json: tisa_train.position.dummy.depth: unknown key");
}

TEST(PositionCatalogDefaults, OnlyNoneBeforeInstallation) {
  EXPECT_EQ(config::position_scheme_names(), std::vector<std::string>{"none"});
  std::string msg = error_of([] { config::config_from_overrides({"model.position.relative=tisa"}); });
  EXPECT_HAS(msg, "model.position.relative: unknown value 'tisa' (expected one of: none)");
  EXPECT_HAS(error_of([] { config::install_position_schemes({{"dummy", config::make_settings<DummySettings>}}); }),
             "must start with \"none\"");
  EXPECT_HAS(error_of([] {
               config::install_position_schemes({{"none", nullptr}, {"other", config::make_settings<DummySettings>}});
             }),
             "its settings are named 'dummy'");
}

}  // namespace
