// End-to-end: `tisa-train model forward` (through the front executable) reproduces the
// transformers goldens (golden/hf_albert/) for a pretraining and a regression model: outputs within
// close(1e-5, 1e-4), loss within close(1e-6, 1e-5); and a relative_key_query model is refused with
// exit code 1. Reads the result with the torch-free safetensors reader.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "io/safetensors.h"
#include "support/test_paths.h"

namespace {

using tisa::test::bin_dir;
using tisa::test::shared_path;

using tisa::test::run;

std::vector<float> floats(const tisa::io::RawTensor& t) {
  EXPECT_EQ(t.dtype, tisa::io::DType::kF32);
  std::vector<float> v(t.numel());
  std::memcpy(v.data(), t.data.data(), v.size() * 4);
  return v;
}

void expect_close(const tisa::io::SafeTensors& got, const tisa::io::SafeTensors& ref, const std::string& name,
                  double atol, double rtol) {
  ASSERT_TRUE(got.tensors.count(name)) << "output lacks " << name;
  const auto& g = got.tensors.at(name);
  const auto& r = ref.tensors.at(name);
  ASSERT_EQ(g.shape, r.shape) << name;
  auto gv = floats(g), rv = floats(r);
  double worst = 0;
  size_t bad = 0;
  for (size_t i = 0; i < gv.size(); ++i) {
    const double d = std::abs(static_cast<double>(gv[i]) - rv[i]);
    worst = std::max(worst, d);
    if (d > atol + rtol * std::abs(rv[i])) ++bad;
  }
  EXPECT_EQ(bad, 0u) << name << ": max |Δ| " << worst;
}

void check(const std::string& golden_case, const std::vector<std::string>& names) {
  const std::string dir = shared_path("golden/hf_albert/" + golden_case);
  const std::string out = tisa::test::make_temp_dir("model_fwd") + "/out.safetensors";
  const std::string cmd = bin_dir() + "/tisa-train model forward --model " + dir + " --inputs " + dir +
                          "/inputs.safetensors --output " + out;
  ASSERT_EQ(run(cmd), 0) << cmd;
  const auto got = tisa::io::read_safetensors(out);
  const auto ref = tisa::io::read_safetensors(dir + "/outputs.safetensors");
  for (const auto& n : names) expect_close(got, ref, n, 1e-5, 1e-4);
  expect_close(got, ref, "loss", 1e-6, 1e-5);
}

TEST(ModelForwardCli, PretrainingGolden) {
  TISA_REQUIRE_SHARED("golden/hf_albert/pretraining_absolute/model.safetensors");
  check("pretraining_absolute",
        {"last_hidden_state", "pooler_output", "prediction_logits", "sop_logits", "mlm_loss", "sop_loss"});
}

TEST(ModelForwardCli, RegressionRelativeKeyGolden) {
  TISA_REQUIRE_SHARED("golden/hf_albert/seqreg1_relative_key/model.safetensors");
  check("seqreg1_relative_key", {"last_hidden_state", "pooler_output", "logits"});
}

TEST(ModelForwardCli, RelativeKeyQueryRefused) {
  TISA_REQUIRE_SHARED("golden/hf_albert/seqcls2_relative_key_query/model.safetensors");
  const std::string dir = shared_path("golden/hf_albert/seqcls2_relative_key_query");
  const std::string out = tisa::test::make_temp_dir("model_fwd") + "/out.safetensors";
  EXPECT_EQ(run(bin_dir() + "/tisa-train model forward --model " + dir + " --inputs " + dir +
                "/inputs.safetensors --output " + out + " 2>/dev/null"),
            1);
}

}  // namespace
