// `tisa-train bench` output format at tiny sizes (one repetition): the JSON holds one result per
// configuration with its spec, positive throughput and memory, finite losses, and the table
// names every configuration. No timing assertions (numbers depend on the machine).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "support/test_paths.h"

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int run(const std::string& command) {
  const int status = std::system(("OMP_WAIT_POLICY=PASSIVE " + command).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(BenchCommand, ModelConfigsTableAndJson) {
  const auto dir = tisa::test::make_temp_dir("bench_cli");
  const std::string json = dir + "/bench.json", table = dir + "/table.txt";
  const std::string cmd = tisa::test::bin_dir() + "/tisa-train bench --config " + tisa::test::source_dir() +
                          "/configs/model/albert-tiny.yaml --scheme absolute,tisa,naive-shaw --mode train,forward "
                          "--shape 2x16 --reps 1 --warmup 0 --threads 1 --data --data-batches 3 --json " +
                          json + " > " + table + " 2>&1";
  ASSERT_EQ(run(cmd), 0) << read_all(table);
  const auto j = nlohmann::json::parse(read_all(json));
  ASSERT_TRUE(j.contains("torch_version"));
  ASSERT_TRUE(j.contains("models"));
  ASSERT_EQ(j["models"].size(), 6u);
  std::set<std::string> seen;
  for (const auto& r : j["models"]) {
    ASSERT_FALSE(r.contains("error")) << r.dump();
    const auto& s = r["spec"];
    seen.insert(s["label"].get<std::string>() + "/" + s["mode"].get<std::string>());
    EXPECT_EQ(s["batch"], 2);
    EXPECT_EQ(s["seq"], 16);
    EXPECT_EQ(r["threads"], 1);
    EXPECT_EQ(r["seconds"]["samples"].size(), 1u);
    EXPECT_GT(r["tokens_per_s"].get<double>(), 0.0);
    EXPECT_GT(r["peak_rss_mib"].get<double>(), r["rss_start_mib"].get<double>() * 0.5);
    EXPECT_GE(r["peak_rss_mib"].get<double>(), r["rss_model_mib"].get<double>());
    if (s["mode"] == "train") {
      // Random tokens over V = 30000: initial MLM loss ≈ ln 30000 ≈ 10.3, SOP ≈ ln 2.
      const double loss = r["loss_first"].get<double>();
      EXPECT_TRUE(std::isfinite(loss));
      EXPECT_NEAR(loss, std::log(30000.0) + std::log(2.0), 1.0);
    }
  }
  EXPECT_EQ(seen, (std::set<std::string>{"absolute/train", "absolute/forward", "tisa/train", "tisa/forward",
                                         "naive-shaw/train", "naive-shaw/forward"}));
  ASSERT_TRUE(j.contains("data"));
  EXPECT_GT(j["data"]["examples_per_s"].get<double>(), 0.0);
  const auto text = read_all(table);
  for (const char* word : {"tokens/s", "naive-shaw", "tisa", "data pipeline"}) EXPECT_NE(text.find(word), std::string::npos) << text;
}

TEST(BenchCommand, UnknownSchemeIsAnError) {
  const auto dir = tisa::test::make_temp_dir("bench_cli_bad");
  const std::string out = dir + "/out.txt";
  EXPECT_EQ(run(tisa::test::bin_dir() + "/tisa-train bench --scheme absolutely --reps 1 > " + out + " 2>&1"), 1);
  EXPECT_NE(read_all(out).find("unknown scheme 'absolutely'"), std::string::npos) << read_all(out);
}

}  // namespace
