// Pinned outputs of `analyze` (issue 34.3): tiny ALBERT checkpoints with constant weights
// (PyTorch's cos(arange) pattern, STYLE §5) for absolute + tisa, t5 and alibi, saved as tisa-train
// saves them. The expected numbers were computed by the analysis before it asked the schemes for
// their terms (a second TISA kernel in analysis/); the refactor must leave them as they were.
// TISA, T5 and ALiBi terms are exact in float64 here; tolerance 1e-12.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "analysis/checkpoint_analysis.h"
#include "common/fs.h"
#include "model/albert.h"
#include "model/hf_checkpoint.h"
#include "model/position/t5.h"
#include "model/position/tisa.h"
#include "support/test_paths.h"

namespace {

using nlohmann::json;

tisa::config::ModelConfig tiny(const std::string& scheme, bool absolute) {
  tisa::config::ModelConfig c;
  c.vocab_size = 40;
  c.embedding_size = 8;
  c.hidden_size = 16;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 16;
  c.max_position_embeddings = 16;
  c.position.absolute = absolute;
  c.position.relative = scheme;
  c.position.settings<tisa::model::TisaSettings>().kernels = 3;
  c.position.settings<tisa::model::T5Settings>().num_buckets = 8;
  c.position.settings<tisa::model::T5Settings>().max_distance = 16;
  return c;
}

// Every parameter k of the model (in registration order) = 0.8·cos(0.37·arange + k): no RNG.
json analyze(const tisa::config::ModelConfig& c, const std::string& name) {
  const auto dir = tisa::test::make_temp_dir("analysis_golden_" + name);
  tisa::model::AlbertForPreTraining m(c);
  {
    torch::NoGradGuard no_grad;
    int k = 0;
    for (auto& p : m->parameters()) {
      auto x = torch::arange(p.numel(), torch::kDouble) * 0.37 + static_cast<double>(k++);
      p.copy_((0.8 * torch::cos(x)).view(p.sizes()));
    }
  }
  tisa::model::save_hf_model(dir + "/model", *m, c, tisa::model::kPretrainingArchitecture);
  return tisa::analysis::analyze_checkpoint({dir + "/model", dir + "/out", 12, true});
}

// Today's numbers (analyze before issue 34.3, in JSON's shortest round-trip form): τ of the absolute part, τ of
// each TISA bias matrix and the kernels f_h(r) for r = −11 … 11, and module 0's term of t5 / alibi.
const char* kGolden = R"(
    {"absolute": {"tau_gram": 0.9986271102323747, "tau_heads": [0.01677024033786667, 0.017325638099460305]},
    "tisa": {"tau_bias_min": 1.0, "plotted_offsets": {"from": -11.0, "to": 11.0}, "layers":
    [{"tau_bias_heads": [1.0, 1.0], "f": [[2.811844663701801e-11, 1.4598323078016561e-09,
    5.315880445069724e-08, 1.357713160002344e-06, 2.432212064796051e-05, 0.0003056014885943283,
    0.002693251181720957, 0.01667034550628864, 0.07507857302348797, 0.3033915699933423, 1.043382244693237,
    1.723462631840493, 1.2578738417522812, 0.6203564588200565, 0.28258467878095694, 0.10108988607571262,
    0.025659640352957674, 0.004570138160497625, 0.0005709143586324758, 5.0023399429300824e-05,
    3.074227661078085e-06, 1.3251329056917394e-07, 4.006299745437187e-09], [5.729240046541186e-08,
    7.957895425145871e-07, 8.751658702433835e-06, 7.620324293169134e-05, 0.0005253484849877754,
    0.002867567382550814, 0.012394364008381375, 0.04254006855318572, 0.12024845569088916,
    0.34573769793851217, 1.0751749440885627, 1.8706945543454172, 1.491863997239113, 0.7813401067904469,
    0.37769481320847675, 0.18065970404991383, 0.07457867470835097, 0.024682958044910042,
    0.006473396328907298, 0.0013442190732434937, 0.00022100344596799268, 2.8768616390028956e-05,
    2.965035115309025e-06]]}, {"tau_bias_heads": [1.0, 1.0], "f": [[-2.3646190705162855e-14,
    -6.9168159299866204e-12, -1.1427018969280888e-09, -1.0662066270799706e-07, -5.61864387534961e-06,
    -0.0001672258258559259, -0.0028109889209354355, -0.026695333677508874, -0.14435999624070223,
    -0.4779557029166221, -1.1317828383908881, -1.594116102040173, -0.9088337567662881, -0.19964134774797226,
    -0.023948749024938713, -0.0020851574213280478, -0.0001143119686123382, -3.5821252062942073e-06,
    -6.342664698277862e-08, -6.342892568068781e-10, -3.5824874165249996e-12, -1.1427827888042877e-14,
    -2.0588485820503513e-17], [-0.4449158823588355, -0.48011079681894925, -0.5140687119736937,
    -0.546156375189593, -0.5757434144203946, -0.6022226748513835, -0.62503677396596, -0.6442114388526656,
    -0.6743738867579409, -0.8476958517479318, -1.4241717838450598, -1.8859280755542989, -1.2952897991002037,
    -0.7408445072257497, -0.639099663146636, -0.6151148031167741, -0.5905156442873074, -0.5625394594244262,
    -0.5317296375344724, -0.49870632948393606, -0.46410369793584894, -0.42854981655600183,
    -0.3926483115761977]]}]},
    "t5": [[0.4892633855342865, 0.4892633855342865, 0.4892633855342865, 0.4892633855342865,
    0.4892633855342865, 0.4892633855342865, -0.06548257917165756, -0.06548257917165756,
    -0.06548257917165756, -0.06548257917165756, -0.5859770178794861, -0.7999686598777771,
    0.6747016310691833, 0.20839807391166687, 0.20839807391166687, 0.20839807391166687, 0.20839807391166687,
    -0.36691078543663025, -0.36691078543663025, -0.36691078543663025, -0.36691078543663025,
    -0.36691078543663025, -0.36691078543663025], [0.6850368976593018, 0.6850368976593018,
    0.6850368976593018, 0.6850368976593018, 0.6850368976593018, 0.6850368976593018, 0.22727039456367493,
    0.22727039456367493, 0.22727039456367493, 0.22727039456367493, -0.3493728041648865, -0.743272066116333,
    0.4735996127128601, -0.08500915765762329, -0.08500915765762329, -0.08500915765762329,
    -0.08500915765762329, -0.5991528034210205, -0.5991528034210205, -0.5991528034210205,
    -0.5991528034210205, -0.5991528034210205, -0.5991528034210205]],
    "alibi": [[-0.6875, -0.625, -0.5625, -0.5, -0.4375, -0.375, -0.3125, -0.25, -0.1875, -0.125, -0.0625,
    -0.0, -0.0625, -0.125, -0.1875, -0.25, -0.3125, -0.375, -0.4375, -0.5, -0.5625, -0.625, -0.6875],
    [-0.04296875, -0.0390625, -0.03515625, -0.03125, -0.02734375, -0.0234375, -0.01953125, -0.015625,
    -0.01171875, -0.0078125, -0.00390625, -0.0, -0.00390625, -0.0078125, -0.01171875, -0.015625,
    -0.01953125, -0.0234375, -0.02734375, -0.03125, -0.03515625, -0.0390625, -0.04296875]]}
)";

// |got − want| ≤ 1e-12 · max(1, |want|) element by element, for numbers and nested arrays.
void expect_close(const json& got, const json& want, const std::string& where) {
  if (want.is_number()) {
    ASSERT_TRUE(got.is_number()) << where << ": " << got.dump();
    const double g = got.get<double>(), w = want.get<double>();
    EXPECT_LE(std::abs(g - w), 1e-12 * std::max(1.0, std::abs(w))) << where << ": got " << g << ", want " << w;
    return;
  }
  ASSERT_EQ(got.size(), want.size()) << where;
  if (want.is_object()) {
    for (const auto& [k, v] : want.items()) expect_close(got.at(k), v, where + "." + k);
    return;
  }
  for (size_t i = 0; i < want.size(); ++i) expect_close(got[i], want[i], where + "[" + std::to_string(i) + "]");
}

}  // namespace

TEST(AnalysisGolden, AbsoluteAndTisaAsBefore) {
  const json want = json::parse(kGolden);
  const json j = analyze(tiny("tisa", true), "tisa");
  expect_close(j.at("absolute").at("tau_gram"), want["absolute"]["tau_gram"], "absolute.tau_gram");
  expect_close(j.at("absolute").at("tau_heads"), want["absolute"]["tau_heads"], "absolute.tau_heads");
  const json& t = j.at("tisa");
  expect_close(t.at("tau_bias_min"), want["tisa"]["tau_bias_min"], "tisa.tau_bias_min");
  expect_close(t.at("plotted_offsets"), want["tisa"]["plotted_offsets"], "tisa.plotted_offsets");
  ASSERT_EQ(t.at("layers").size(), 2u);
  for (size_t l = 0; l < 2; ++l)
    for (const char* key : {"tau_bias_heads", "f"})
      expect_close(t["layers"][l].at(key), want["tisa"]["layers"][l][key], "tisa.layers[" + std::to_string(l) + "]." + key);
}

TEST(AnalysisGolden, T5AndAlibiAsBefore) {
  const json want = json::parse(kGolden);
  for (const char* s : {"t5", "alibi"}) {
    const json j = analyze(tiny(s, false), s);
    ASSERT_TRUE(j.at("scheme").contains("modules")) << j.dump();
    expect_close(j["scheme"]["modules"][0].at("f"), want[s], std::string(s) + ".modules[0].f");
  }
}
