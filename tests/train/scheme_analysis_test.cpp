// `analyze` on checkpoints of the schemes besides TISA (model/position/): a tiny ALBERT saved as
// tisa-train saves it, then analysis.json's "scheme" part holds each module's position term per
// head against j − i (the scheme's offset_profile, read back from the file) and the SVG is drawn;
// a scheme whose term is not a function of j − i alone (rope) is named but not drawn.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "analysis/checkpoint_analysis.h"
#include "common/fs.h"
#include "model/albert.h"
#include "model/hf_checkpoint.h"
#include "model/position/t5.h"
#include "support/svg_check.h"
#include "support/test_paths.h"

namespace {

tisa::config::ModelConfig tiny(std::string s) {
  tisa::config::ModelConfig c;
  c.vocab_size = 40;
  c.embedding_size = 8;
  c.hidden_size = 16;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 16;
  c.max_position_embeddings = 16;
  c.position.absolute = false;
  c.position.relative = s;
  c.position.settings<tisa::model::T5Settings>().num_buckets = 8;
  c.position.settings<tisa::model::T5Settings>().max_distance = 16;
  return c;
}

TEST(SchemeAnalysis, DrawsEachLearnedSchemesTermAgainstTheOffset) {
  const auto dir = tisa::test::make_temp_dir("scheme_analysis");
  torch::manual_seed(1);
  const auto c = tiny("t5");
  tisa::model::AlbertForPreTraining m(c);
  tisa::model::save_hf_model(dir + "/model", *m, c, tisa::model::kPretrainingArchitecture);
  auto j = tisa::analysis::analyze_checkpoint({dir + "/model", dir + "/out", 6, true});
  ASSERT_TRUE(j["scheme"].is_object()) << j.dump();
  EXPECT_EQ(j["scheme"]["scheme"], "t5");
  ASSERT_EQ(j["scheme"]["modules"].size(), 2u);  // per layer
  auto* t5 = dynamic_cast<tisa::model::T5BiasImpl*>(m->albert->encoder->schemes[1].get());
  ASSERT_NE(t5, nullptr);
  auto want = t5->offset_profile(6);  // [H, 11]
  const auto& f = j["scheme"]["modules"][1]["f"];
  ASSERT_EQ(f.size(), 2u);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t r = 0; r < 11; ++r)
      EXPECT_NEAR(f[h][r].get<double>(), want[h][r].item<double>(), 1e-6) << h << "," << r;
  std::string why;
  EXPECT_TRUE(tisa::test::svg_well_formed(tisa::fs::read_file(dir + "/out/t5_profile.svg"), &why)) << why;
}

TEST(SchemeAnalysis, NamesASchemeWhoseTermDependsOnContent) {
  const auto dir = tisa::test::make_temp_dir("scheme_analysis_rope");
  const auto c = tiny("rope");
  tisa::model::AlbertForPreTraining m(c);
  tisa::model::save_hf_model(dir + "/model", *m, c, tisa::model::kPretrainingArchitecture);
  try {
    tisa::analysis::analyze_checkpoint({dir + "/model", dir + "/out", 6, false});
    FAIL() << "a rope model without a table has nothing to analyse";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("nothing to analyse"), std::string::npos) << e.what();
  }
}

}  // namespace
