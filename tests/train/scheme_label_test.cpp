// bench's scheme labels (bench::apply_scheme_label): every registry scheme alone, with the table
// as absolute+<scheme> and absolute_<scheme>; a scheme's computations (shaw: naive, gather) and
// presets (shaw: hf) are asked of the scheme; unknown parts are named.
#include <gtest/gtest.h>

#include "bench/bench.h"
#include "common/error.h"
#include "model/position/registry.h"
#include "model/position/shaw.h"

namespace {

using tisa::bench::apply_scheme_label;

TEST(SchemeLabel, EveryRegistrySchemeAloneAndWithTheTable) {
  for (const auto& name : tisa::model::relative_scheme_names()) {
    SCOPED_TRACE(name);
    tisa::config::ModelConfig m;
    EXPECT_EQ(apply_scheme_label(name, m), "");
    EXPECT_FALSE(m.position.absolute);
    EXPECT_EQ(m.position.relative, name);
    for (const std::string sep : {"+", "_"}) {
      tisa::config::ModelConfig t;
      apply_scheme_label("absolute" + sep + name, t);
      EXPECT_TRUE(t.position.absolute);
      EXPECT_EQ(t.position.relative, name);
    }
  }
  tisa::config::ModelConfig m;
  apply_scheme_label("absolute", m);
  EXPECT_TRUE(m.position.absolute);
  EXPECT_EQ(m.position.relative, "none");
}

TEST(SchemeLabel, ComputationsAndPresetsComeFromTheScheme) {
  tisa::config::ModelConfig m;
  m.max_position_embeddings = 64;
  EXPECT_EQ(apply_scheme_label("naive-shaw-hf", m), "naive");
  EXPECT_EQ(m.position.relative, "shaw");
  EXPECT_EQ(m.position.settings<tisa::model::ShawSettings>().max_distance, 63);
  EXPECT_FALSE(m.position.settings<tisa::model::ShawSettings>().values);
  tisa::config::ModelConfig g;
  EXPECT_EQ(apply_scheme_label("gather-shaw", g), "gather");
  EXPECT_TRUE(g.position.settings<tisa::model::ShawSettings>().values);
}

TEST(SchemeLabel, UnknownPartsAreNamed) {
  auto message = [](const std::string& label) {
    tisa::config::ModelConfig m;
    try {
      apply_scheme_label(label, m);
    } catch (const tisa::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("absolutely").find("unknown scheme 'absolutely'"), std::string::npos);
  EXPECT_NE(message("absolute_rope_x").find("unknown scheme"), std::string::npos);
  EXPECT_NE(message("naive-tisa").find("has no computation 'naive'"), std::string::npos) << message("naive-tisa");
  EXPECT_NE(message("fast-shaw").find("it has: gather, skew, naive"), std::string::npos) << message("fast-shaw");
  EXPECT_NE(message("tisa-hf").find("has no preset 'hf'"), std::string::npos);
  EXPECT_NE(message("a-b-c-d").find("unknown scheme"), std::string::npos);
}

}  // namespace
