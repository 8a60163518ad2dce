// `tisa-train analyze` and `tisa-train plot` through the front executable: a tiny ALBERT checkpoint
// written here with the torch-free safetensors writer (sinusoidal position table → τ(P·Pᵀ) = 1, one
// TISA layer → τ of its biases = 1), a synthetic metrics.jsonl, exit codes of bad calls.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "common/fs.h"
#include "io/safetensors.h"
#include "support/svg_check.h"
#include "support/test_paths.h"

namespace {

int run(const std::string& command) {
  const int status = std::system(("OMP_WAIT_POLICY=PASSIVE " + command).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

tisa::io::RawTensor f32(std::vector<int64_t> shape, const std::vector<float>& values) {
  tisa::io::RawTensor t;
  t.dtype = tisa::io::DType::kF32;
  t.shape = std::move(shape);
  t.data.resize(values.size() * 4);
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

std::vector<float> pseudo_random(size_t n, unsigned seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(std::sin(seed * 12.9898 + i * 78.233) * 0.5);
  return v;
}

}  // namespace

TEST(AnalyzePlotCli, AnalyzeTinyAlbertCheckpoint) {
  const auto dir = tisa::test::make_temp_dir("analyze_cli");
  const int64_t P = 16, E = 4, H = 4;
  tisa::io::SafeTensors st;
  std::vector<float> table;
  for (int64_t i = 0; i < P; ++i)
    for (double w : {0.5, 0.1}) table.push_back(std::sin(w * i)), table.push_back(std::cos(w * i));
  st.tensors["albert.embeddings.position_embeddings.weight"] = f32({P, E}, table);
  st.tensors["albert.encoder.embedding_hidden_mapping_in.weight"] = f32({H, E}, pseudo_random(H * E, 1));
  st.tensors["albert.encoder.embedding_hidden_mapping_in.bias"] = f32({H}, pseudo_random(H, 2));
  const std::string layer = "albert.encoder.albert_layer_groups.0.albert_layers.0.attention.";
  st.tensors[layer + "query.weight"] = f32({H, H}, pseudo_random(H * H, 3));
  st.tensors[layer + "query.bias"] = f32({H}, pseudo_random(H, 4));
  st.tensors[layer + "key.weight"] = f32({H, H}, pseudo_random(H * H, 5));
  st.tensors[layer + "key.bias"] = f32({H}, pseudo_random(H, 6));
  st.tensors["albert.encoder.tisa.0.offsets"] = f32({2, 2}, {-3, 1, 4, 0});
  st.tensors["albert.encoder.tisa.0.amplitudes"] = f32({2, 2}, {0.1f, 0.2f, -0.1f, 0.3f});
  st.tensors["albert.encoder.tisa.0.sharpness"] = f32({2, 2}, {0.1f, 0.05f, 0.2f, 0.1f});
  tisa::fs::create_directories(dir + "/ckpt");
  tisa::io::write_safetensors(dir + "/ckpt/model.safetensors", st);
  tisa::fs::write_file_atomic(dir + "/ckpt/config.json",
                              R"({"model_type": "albert", "num_attention_heads": 2, "hidden_size": 4,
                                  "embedding_size": 4, "max_position_embeddings": 16})");
  const std::string log = dir + "/log.txt";
  ASSERT_EQ(run(tisa::test::bin_dir() + "/tisa-train analyze --model " + dir + "/ckpt --out " + dir +
                "/out --positions 12 > " + log + " 2>&1"),
            0)
      << tisa::fs::read_file(log);
  auto j = nlohmann::json::parse(tisa::fs::read_file(dir + "/out/analysis.json"));
  EXPECT_NEAR(j["absolute"]["tau_gram"].get<double>(), 1.0, 1e-9);
  EXPECT_EQ(j["absolute"]["tau_heads"].size(), 2u);
  EXPECT_EQ(j["tisa"]["length"], 12);
  EXPECT_NEAR(j["tisa"]["tau_bias_min"].get<double>(), 1.0, 1e-12);
  for (const char* f : {"gram.svg", "gram_toeplitz.svg", "heads.svg", "head_profiles.svg", "tisa_kernels.svg", "tisa_bias.svg"}) {
    std::string why;
    EXPECT_TRUE(tisa::test::svg_well_formed(tisa::fs::read_file(dir + "/out/" + f), &why)) << f << ": " << why;
  }
  // A missing tensor is an error (exit code 1) naming it.
  st.tensors.erase(layer + "key.weight");
  tisa::io::write_safetensors(dir + "/ckpt/model.safetensors", st);
  EXPECT_EQ(run(tisa::test::bin_dir() + "/tisa-train analyze --model " + dir + "/ckpt --out " + dir + "/out2 > " + log +
                " 2>&1"),
            1);
  EXPECT_NE(tisa::fs::read_file(log).find("key.weight"), std::string::npos) << tisa::fs::read_file(log);
}

TEST(AnalyzePlotCli, PlotTwoRuns) {
  const auto dir = tisa::test::make_temp_dir("plot_cli");
  for (const char* name : {"run-a", "run-b"}) {
    tisa::fs::create_directories(dir + "/" + name);
    std::ofstream out(dir + "/" + name + "/metrics.jsonl");
    for (int step = 10; step <= 100; step += 10) {
      out << R"({"event":"train","step":)" << step << R"(,"time":1,"loss":)" << 10.0 / step << "}\n";
      out << R"({"event":"eval","step":)" << step << R"(,"time":1,"mlm_accuracy":)" << step / 200.0
          << R"(,"tau_gram":0.9})" << "\n";
    }
  }
  const std::string log = dir + "/log.txt";
  ASSERT_EQ(run(tisa::test::bin_dir() + "/tisa-train plot --runs " + dir + "/run-a " + dir + "/run-b --out " + dir +
                "/curves.svg > " + log + " 2>&1"),
            0)
      << tisa::fs::read_file(log);
  std::string svg = tisa::fs::read_file(dir + "/curves.svg");
  std::string why;
  EXPECT_TRUE(tisa::test::svg_well_formed(svg, &why)) << why;
  EXPECT_NE(svg.find(">run-b</text>"), std::string::npos);
  EXPECT_EQ(run(tisa::test::bin_dir() + "/tisa-train plot --runs " + dir + "/nope --out " + dir + "/x.svg > " + log +
                " 2>&1"),
            1);
}
