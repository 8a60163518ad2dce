// The paper reproduction's results table (src/report/paper_report.h) on a hand-made folder:
// positional parameter counts of SPEC §1/§2 for ALBERT-base sizes, median/std over seeds, the
// per-seed GLUE average over tasks (only seeds every task has), length rows with n/a, and the
// Markdown cells. All expected numbers are computed by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <tuple>

#include "common/error.h"
#include "common/fs.h"
#include "config/config.h"
#include "model/hf_checkpoint.h"
#include "report/paper_report.h"
#include "support/test_paths.h"

namespace tisa::report {
namespace {
using nlohmann::json;

TEST(PaperReport, SeedStats) {
  auto s = seed_stats({3, 1, 2});
  EXPECT_DOUBLE_EQ(s.median, 2);
  EXPECT_DOUBLE_EQ(s.mean, 2);
  EXPECT_DOUBLE_EQ(s.std, 1);  // sqrt((1 + 1 + 0) / 2)
  EXPECT_EQ(s.n, 3u);
  s = seed_stats({4, 1, 2, 10});
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 4.25);
  s = seed_stats({0.5});
  EXPECT_DOUBLE_EQ(s.median, 0.5);
  EXPECT_DOUBLE_EQ(s.std, 0);
  EXPECT_THROW(seed_stats({}), Error);
}

// ALBERT-base sizes (SPEC §3) with the variant's position scheme.
config::ModelConfig base_model(bool absolute, std::string relative) {
  config::ModelConfig m;  // defaults: albert-base-v2
  m.position.absolute = absolute;
  m.position.relative = relative;
  return m;
}

void write_variant(const std::string& dir, const std::string& name, const config::ModelConfig& m) {
  const std::string final_dir = dir + "/pretrain/" + name + "/final";
  fs::create_directories(final_dir);
  fs::write_file_atomic(final_dir + "/config.json", model::hf_config_json(m, model::kPretrainingArchitecture, 2));
  fs::write_file_atomic(final_dir + "/model.safetensors", "not read by the report");
}

void write_glue(const std::string& dir, const std::string& variant, const std::string& task, const std::string& metric,
                const std::vector<std::pair<int64_t, double>>& seed_values) {
  json runs = json::array();
  for (const auto& [seed, value] : seed_values)
    runs.push_back({{"seed", seed}, {"metrics", {{metric, value}, {"other", 0.0}}}, {"run_dir", "x"}});
  json r = {{"task", task}, {"main_metric", metric}, {"runs", runs}, {"summary", json::object()}};
  fs::create_directories(dir + "/glue/" + variant + "/" + task);
  fs::write_file_atomic(dir + "/glue/" + variant + "/" + task + "/results.json", r.dump(2));
}

// glue/<variant>/<task>/seed-<seed>/dev_predictions.json: `wrong` of the examples mispredicted.
void write_dev_predictions(const std::string& dir, const std::string& variant, const std::string& task, int64_t seed,
                           size_t examples, size_t wrong, const std::string& metrics_task = "rte",
                           const json& metrics = {"acc"}) {
  std::vector<double> labels, predictions;
  for (size_t i = 0; i < examples; ++i) {
    labels.push_back(static_cast<double>(i % 2));
    predictions.push_back(i < wrong ? 1.0 - static_cast<double>(i % 2) : static_cast<double>(i % 2));
  }
  const std::string seed_dir = dir + "/glue/" + variant + "/" + task + "/seed-" + std::to_string(seed);
  fs::create_directories(seed_dir);
  json split = {{"split", "dev"}, {"metrics_task", metrics_task}, {"metrics", metrics}, {"labels", labels},
                {"predictions", predictions}};
  fs::write_file_atomic(seed_dir + "/dev_predictions.json", json({{"task", task}, {"splits", json::array({split})}}).dump());
}

TEST(PaperReport, CollectsAndFormats) {
  const std::string dir = test::make_temp_dir("paper_report");
  write_variant(dir, "absolute", base_model(true, "none"));
  write_variant(dir, "absolute_tisa", base_model(true, "tisa"));
  write_variant(dir, "tisa", base_model(false, "tisa"));
  write_variant(dir, "shaw", base_model(false, "shaw"));
  write_variant(dir, "none", base_model(false, "none"));

  write_glue(dir, "absolute", "RTE", "acc", {{1, 0.69}, {2, 0.70}, {3, 0.71}});
  write_glue(dir, "absolute", "MRPC", "acc_and_f1", {{1, 0.80}, {2, 0.84}, {3, 0.82}});
  write_glue(dir, "tisa", "RTE", "acc", {{1, 0.60}, {2, 0.62}, {3, 0.64}});
  write_glue(dir, "tisa", "MRPC", "acc_and_f1", {{1, 0.70}, {2, 0.74}});  // seed 3 missing
  // RTE dev predictions: absolute wrong on 30 of 200 examples, tisa on 62 (seed 3: 64); MRPC has
  // none (runs of older versions), so it gets no paired comparison.
  for (int64_t seed : {1, 2, 3}) {
    write_dev_predictions(dir, "absolute", "RTE", seed, 200, 30);
    write_dev_predictions(dir, "tisa", "RTE", seed, 200, seed == 3 ? 64 : 62);
  }

  json abs_len = {{"lengths",
                   {{{"seq_length", 512}, {"available", true}, {"mlm_loss", 2.5}, {"mlm_accuracy", 0.5}, {"sop_accuracy", 0.9}},
                    {{"seq_length", 1024}, {"available", false}, {"reason", "n/a: absolute table has 512 rows"}}}}};
  json tisa_len = {{"lengths",
                    {{{"seq_length", 512}, {"available", true}, {"mlm_loss", 2.25}, {"mlm_accuracy", 0.55}, {"sop_accuracy", 0.8}},
                     {{"seq_length", 1024}, {"available", true}, {"mlm_loss", 2.75}, {"mlm_accuracy", 0.45}, {"sop_accuracy", 0.7}}}}};
  // eval-mlm records how it masked; both variants used their pretraining's settings.
  for (json* l : {&abs_len, &tisa_len}) {
    (*l)["masked_lm_prob"] = 0.15;
    (*l)["max_ngram"] = 1;
    (*l)["masking_from"] = "model";
  }
  fs::create_directories(dir + "/length");
  fs::write_file_atomic(dir + "/length/absolute.json", abs_len.dump());
  fs::write_file_atomic(dir + "/length/tisa.json", tisa_len.dump());
  fs::write_file_atomic(dir + "/pretrain/absolute/metrics.jsonl",
                        "{\"event\":\"train\",\"step\":10,\"loss\":9}\n"
                        "{\"event\":\"eval\",\"step\":10,\"mlm_loss\":4.0,\"mlm_accuracy\":0.2,\"sop_accuracy\":0.6,"
                        "\"tau_gram\":0.25,\"tau_heads_mean\":0.125}\n"
                        "{\"event\":\"eval\",\"step\":20,\"mlm_loss\":3.0,\"mlm_accuracy\":0.3,\"sop_accuracy\":0.7,"
                        "\"tau_gram\":0.5,\"tau_heads_mean\":0.375}\n"
                        "{\"event\":\"ev");  // a line cut by a crash is ignored

  PaperReportOptions o;
  o.dir = dir;
  o.meta = {{"scale", "test"}, {"machine", "here"}};
  const json r = collect_paper_results(o);
  EXPECT_EQ(r["tasks"], json({"MRPC", "RTE"}));  // GLUE table order
  const auto& v = r["variants"];
  ASSERT_EQ(v.size(), 5u);
  // The registry's variant order (config/position_variant.h), whatever the folder order:
  // absolute first, then by scheme in table order, absolute_<scheme> before <scheme>.
  EXPECT_EQ(v[0]["name"], "absolute");
  EXPECT_EQ(v[3]["name"], "absolute_tisa");
  EXPECT_EQ(v[4]["name"], "tisa");
  EXPECT_EQ(v[2]["name"], "shaw");
  EXPECT_EQ(v[1]["name"], "none");
  // Positional parameters (SPEC §1, §2), ALBERT-base: P·E = 512·128; TISA 3·S·H·L = 3·5·12·12;
  // Shaw 2·(2k+1)·d·L = 2·33·64·12.
  EXPECT_EQ(v[0]["positional_parameters"], 65536);
  EXPECT_EQ(v[3]["positional_parameters"], 65536 + 2160);
  EXPECT_EQ(v[4]["positional_parameters"], 2160);
  EXPECT_EQ(v[2]["positional_parameters"], 50688);
  EXPECT_EQ(v[1]["positional_parameters"], 0);
  EXPECT_EQ(v[1]["position"], "none");
  EXPECT_EQ(v[2]["position"], "shaw (k=16, keys+values, per layer)");

  const auto& rte = v[0]["glue"]["RTE"];
  EXPECT_NEAR(rte["median"].get<double>(), 0.70, 1e-12);
  EXPECT_NEAR(rte["std"].get<double>(), 0.01, 1e-12);
  EXPECT_EQ(rte["main_metric"], "acc");
  // Per-seed averages (0.745, 0.77, 0.765): median 0.765, std sqrt(0.000175).
  const auto& avg = v[0]["glue_average"];
  EXPECT_NEAR(avg["median"].get<double>(), 0.765, 1e-12);
  EXPECT_NEAR(avg["std"].get<double>(), std::sqrt(0.000175), 1e-12);
  EXPECT_EQ(avg["n"], 3);
  // tisa: only seeds 1 and 2 are in both tasks: (0.65, 0.68) → median 0.665.
  const auto& tavg = v[4]["glue_average"];
  EXPECT_EQ(tavg["seeds"], json({1, 2}));
  EXPECT_NEAR(tavg["median"].get<double>(), 0.665, 1e-12);
  EXPECT_FALSE(v[3].contains("glue_average"));
  EXPECT_EQ(v[0]["pretrain_eval"]["step"], 20);
  EXPECT_DOUBLE_EQ(v[0]["pretrain_eval"]["mlm_loss"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(v[0]["pretrain_eval"]["tau_gram"].get<double>(), 0.5);
  EXPECT_EQ(v[0]["pretrain_tau_first"]["step"], 10);
  EXPECT_DOUBLE_EQ(v[0]["pretrain_tau_first"]["tau_heads_mean"].get<double>(), 0.125);
  EXPECT_FALSE(v[4].contains("pretrain_tau_first"));

  const std::string md = paper_results_markdown(r);
  // τ grows from the first to the last evaluation; variants without a metrics file get dashes.
  EXPECT_NE(md.find("| absolute | 20 | 3.000 | 30.0 | 70.0 | 0.250 (step 10) → 0.500 | 0.125 (step 10) → 0.375 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| tisa | — | — | — | — | — | — |"), std::string::npos) << md;
  EXPECT_NE(md.find("scale test"), std::string::npos);
  EXPECT_NE(md.find("- machine: here"), std::string::npos);
  // Mean ± t(0.975, 2)·std/√3: MRPC 82.0 ± 4.303·2.0/√3, RTE 70.0 ± 4.303·1.0/√3, average 76.0 ± 3.3.
  EXPECT_NE(md.find("| absolute | absolute (P=512) | 65,536 | 82.0 ± 5.0 | 70.0 ± 2.5 | 76.0 ± 3.3 | 2.500 | "
                    "n/a: absolute table has 512 rows |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| tisa | tisa (S=5, per layer) | 2,160 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| L=512 (1×) | L=1024 (2×) |"), std::string::npos) << md;
  EXPECT_NE(md.find("(no short sequences; 15 % of tokens masked, single words, as in pretraining)"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("2.250 / 55.0 / 80.0"), std::string::npos) << md;
  EXPECT_NE(md.find("| none | none | 0 | — | — | — | — | — |"), std::string::npos) << md;
  EXPECT_NE(md.find("| absolute | 20 | 3.000 | 30.0 | 70.0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| tisa | MRPC | acc_and_f1 | 1,2 | 70.0, 74.0 |"), std::string::npos) << md;

  // Paired comparison: tisa − absolute on RTE = −(32 + 32 + 34) / 3 / 200 = −0.16333.
  const auto& cmp = r["comparisons"];
  ASSERT_EQ(cmp.size(), 1u) << cmp.dump();
  EXPECT_EQ(cmp[0]["variant"], "tisa");
  EXPECT_EQ(cmp[0]["task"], "RTE");
  EXPECT_EQ(cmp[0]["seeds"], json({1, 2, 3}));
  EXPECT_NEAR(cmp[0]["difference"].get<double>(), -98.0 / 600.0, 1e-12);
  EXPECT_LT(cmp[0]["high"].get<double>(), 0);
  EXPECT_LT(cmp[0]["p_holm"].get<double>(), 0.01);
  EXPECT_TRUE(cmp[0]["significant"].get<bool>());
  // Smoothed p-values: never 0, at least the floor the draws can resolve, stated beside the table.
  const int64_t draws = cmp[0]["resamples"].get<int64_t>();
  EXPECT_EQ(draws, 10000);
  EXPECT_GE(cmp[0]["p"].get<double>(), 2.0 / (draws + 1));
  EXPECT_GE(cmp[0]["p_randomisation"].get<double>(), 1.0 / (draws + 1));
  EXPECT_LT(cmp[0]["p_randomisation"].get<double>(), 0.01);
  EXPECT_EQ(cmp[0]["randomisation_trials"], draws);
  EXPECT_NE(md.find("smallest attainable p is 2.0e-04"), std::string::npos) << md;
  EXPECT_NE(md.find("| p | p (AR) | p (Holm) | verdict |"), std::string::npos) << md;
  EXPECT_NE(md.find("| tisa | RTE | 3 | -16.3 | ["), std::string::npos) << md;
  EXPECT_NE(md.find("tisa is worse than absolute on RTE (-16.3"), std::string::npos) << md;
  EXPECT_NEAR(v[0]["glue"]["RTE"]["ci95"].get<double>(), 4.303 * 0.01 / std::sqrt(3.0), 1e-12);

  const std::string svg = dir + "/differences.svg";
  ASSERT_TRUE(write_comparison_figure(r, svg));
  const std::string figure = fs::read_file(svg);
  EXPECT_NE(figure.find(">RTE</text>"), std::string::npos);
  EXPECT_NE(figure.find(">tisa</text>"), std::string::npos);
  EXPECT_NE(figure.find("#2563b0"), std::string::npos);  // significant and worse: blue

  // Labels that differ between variants (another dev file) are an error naming the file.
  write_dev_predictions(dir, "tisa", "RTE", 2, 190, 10);
  try {
    collect_paper_results(o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("seed-2/dev_predictions.json"), std::string::npos) << e.what();
  }
}

// Issue 31: each task's majority-class score beside the variants, and seeds whose predictions are
// one class marked in the table and in results.json.
TEST(PaperReport, BaselinesAndOneClassSeeds) {
  const std::string dir = test::make_temp_dir("paper_report_baselines");
  write_variant(dir, "absolute", base_model(true, "none"));
  write_glue(dir, "absolute", "RTE", "acc", {{1, 0.85}, {2, 0.70}});
  write_dev_predictions(dir, "absolute", "RTE", 1, 20, 3);
  // Seed 2: label 1 for every example, of which 14 of 20 are 1 (majority share 0.7).
  const std::string seed_dir = dir + "/glue/absolute/RTE/seed-2";
  std::vector<double> labels(20, 1.0), predictions(20, 1.0);
  for (size_t i = 0; i < 6; ++i) labels[i] = 0.0;
  json split = {{"split", "dev"}, {"metrics_task", "rte"}, {"metrics", {"acc"}}, {"labels", labels},
                {"predictions", predictions}};
  fs::create_directories(seed_dir);
  fs::write_file_atomic(seed_dir + "/dev_predictions.json", json({{"task", "RTE"}, {"splits", json::array({split})}}).dump());
  // Seed 1's labels must be the same dev set: rewrite them to seed 2's.
  {
    const std::string path = dir + "/glue/absolute/RTE/seed-1/dev_predictions.json";
    json f = json::parse(fs::read_file(path));
    std::vector<double> p1 = labels;
    for (size_t i = 0; i < 3; ++i) p1[i] = 1.0 - p1[i];
    f["splits"][0]["labels"] = labels;
    f["splits"][0]["predictions"] = p1;
    fs::write_file_atomic(path, f.dump());
  }
  // The glue command's own output folder beside the tasks is not an unfinished task.
  fs::create_directories(dir + "/glue/absolute/leaderboard");
  PaperReportOptions o;
  o.dir = dir;
  o.variants = {"absolute"};
  const json r = collect_paper_results(o);
  EXPECT_EQ(r["incomplete"], json::array()) << r["incomplete"].dump();
  ASSERT_TRUE(r["baselines"].contains("RTE")) << r.dump(2);
  EXPECT_DOUBLE_EQ(r["baselines"]["RTE"]["score"].get<double>(), 0.7);
  EXPECT_EQ(r["baselines"]["RTE"]["majority_label"], 1.0);
  EXPECT_EQ(r["variants"][0]["glue"]["RTE"]["constant_seeds"], json({2}));
  EXPECT_EQ(r["variants"][0]["model_config_source"], "pretrain/absolute/final/config.json");  // no machine path
  const std::string md = paper_results_markdown(r);
  EXPECT_NE(md.find("| majority class | — | — | 70.0 | — |"), std::string::npos) << md;
  EXPECT_NE(md.find("(1 one-class)"), std::string::npos) << md;
  EXPECT_NE(md.find("| absolute | RTE | acc | 1,2 | 85.0, 70.0* |"), std::string::npos) << md;
}

// Issue 31, point 5: the paper's claims beside this run — absolute + TISA against absolute (from
// the table's own comparisons), TISA against Shaw (paired anew), the positional parameter counts.
TEST(PaperReport, PaperClaimsSetTheRunBesideThePaper) {
  const std::string dir = test::make_temp_dir("paper_report_claims");
  // Wrong answers out of 200 (the first ones, so fewer wrong = a subset): absolute 30,
  // absolute + TISA 10, TISA 40, Shaw 60.
  const std::vector<std::tuple<std::string, bool, std::string, size_t>> runs = {
      {"absolute", true, "none", 30}, {"absolute_tisa", true, "tisa", 10}, {"tisa", false, "tisa", 40},
      {"shaw", false, "shaw", 60}};
  for (const auto& [name, absolute, relative, wrong] : runs) {
    write_variant(dir, name, base_model(absolute, relative));
    const double acc = 1.0 - static_cast<double>(wrong) / 200.0;
    write_glue(dir, name, "RTE", "acc", {{1, acc}, {2, acc}});
    for (int64_t seed : {1, 2}) write_dev_predictions(dir, name, "RTE", seed, 200, wrong);
  }
  PaperReportOptions o;
  o.dir = dir;
  o.variants = {"absolute", "absolute_tisa", "tisa", "shaw"};
  o.resamples = 2000;
  const json r = collect_paper_results(o);
  const json& claims = r["claims"];
  const json& on_absolute = claims["absolute_tisa_vs_absolute"]["comparisons"];
  ASSERT_EQ(on_absolute.size(), 1u) << claims.dump(2);
  EXPECT_NEAR(on_absolute[0]["difference"].get<double>(), 0.10, 1e-12);  // (30 − 10) / 200
  EXPECT_EQ(claims["absolute_tisa_vs_absolute"]["holm_over"], "table");
  const json& on_shaw = claims["tisa_vs_shaw"]["comparisons"];
  ASSERT_EQ(on_shaw.size(), 1u) << claims.dump(2);
  EXPECT_EQ(on_shaw[0]["variant"], "tisa");
  EXPECT_NEAR(on_shaw[0]["difference"].get<double>(), 0.10, 1e-12);  // (60 − 40) / 200
  // ALBERT-base: the table P·E = 512·128; TISA 3·S·H·L = 3·5·12·12.
  EXPECT_EQ(claims["positional_parameters"]["absolute"], 65536);
  EXPECT_EQ(claims["positional_parameters"]["tisa"], 2160);
  EXPECT_EQ(claims["positional_parameters"]["absolute_tisa"], 65536 + 2160);
  const std::string md = paper_results_markdown(r);
  EXPECT_NE(md.find("| absolute + TISA against absolute (ALBERT), GLUE dev | better | better on 1, worse on 0, "
                    "no significant difference on 0 of 1 tasks: RTE +10.0 ["),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| TISA against Shaw et al., GLUE dev | compared in the paper; SPEC §1 states no direction | "
                    "better on 1, worse on 0, no significant difference on 0 of 1 tasks: RTE +10.0 ["),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| positional parameters | TISA adds orders of magnitude fewer than ALBERT's table | absolute "
                    "65,536; absolute_tisa 67,696; shaw "),
            std::string::npos)
      << md;
}

// Issue 31: a variant pretrained twice (tisa, tisa@2) is compared with the reference's matching
// pretrainings (absolute, absolute@2) in one row whose interval includes the pretraining draw.
TEST(PaperReport, PretrainingDrawsAreComparedTogether) {
  const std::string dir = test::make_temp_dir("paper_report_draws");
  // wrong answers out of 200: absolute 30 / 30, tisa 40 / 80 (draw 1 / draw 2), both seeds alike.
  const std::vector<std::pair<std::string, size_t>> runs = {{"absolute", 30}, {"absolute@2", 30}, {"tisa", 40},
                                                            {"tisa@2", 80}};
  for (const auto& [name, wrong] : runs) {
    write_variant(dir, name, base_model(name.rfind("absolute", 0) == 0, name.rfind("tisa", 0) == 0 ? "tisa" : "none"));
    const double acc = 1.0 - static_cast<double>(wrong) / 200.0;
    write_glue(dir, name, "RTE", "acc", {{1, acc}, {2, acc}});
    for (int64_t seed : {1, 2}) write_dev_predictions(dir, name, "RTE", seed, 200, wrong);
  }
  PaperReportOptions o;
  o.dir = dir;
  o.variants = {"absolute", "absolute@2", "tisa", "tisa@2"};
  o.resamples = 2000;
  const json r = collect_paper_results(o);
  const auto& cmp = r["comparisons"];
  ASSERT_EQ(cmp.size(), 1u) << cmp.dump(2);
  EXPECT_EQ(cmp[0]["variant"], "tisa");
  EXPECT_EQ(cmp[0]["pretraining_draws"], json({1, 2}));
  EXPECT_EQ(cmp[0]["seeds"], json({1, 2}));
  // Δ over both pretrainings and seeds: (−10 − 50) / 2 / 200 = −0.15.
  EXPECT_NEAR(cmp[0]["difference"].get<double>(), -0.15, 1e-12);
  // Two pretrainings that disagree (−0.05, −0.25): the interval spans their spread.
  EXPECT_LT(cmp[0]["low"].get<double>(), -0.2);
  EXPECT_GT(cmp[0]["high"].get<double>(), -0.1);
  const std::string md = paper_results_markdown(r);
  EXPECT_NE(md.find("| tisa | RTE | 2 × 2 | -15.0 | ["), std::string::npos) << md;
  EXPECT_NE(md.find("nested bootstrap"), std::string::npos) << md;
}

TEST(PaperReport, ExplicitVariantsAndErrors) {
  const std::string dir = test::make_temp_dir("paper_report2");
  PaperReportOptions o;
  o.dir = dir;
  EXPECT_THROW(collect_paper_results(o), Error);  // nothing there
  o.dir = dir + "/missing";
  EXPECT_THROW(collect_paper_results(o), Error);
  o.dir = dir;
  o.variants = {"tisa"};  // not run yet: a row of dashes
  const json r = collect_paper_results(o);
  ASSERT_EQ(r["variants"].size(), 1u);
  EXPECT_FALSE(r["variants"][0].contains("positional_parameters"));
  EXPECT_NE(paper_results_markdown(r).find("| tisa | — | — |"), std::string::npos);
  EXPECT_EQ(r["incomplete"], json({"pretrain/tisa is missing"}));
  // A broken results.json names the file.
  fs::create_directories(dir + "/glue/tisa/RTE");
  fs::write_file_atomic(dir + "/glue/tisa/RTE/results.json", "{");
  try {
    collect_paper_results(o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("RTE/results.json"), std::string::npos) << e.what();
  }
}

// Issue 36, point 4: a half-finished reproduction names exactly what is missing or unfinished
// (`report` exits 1 on it, after writing the table).
TEST(PaperReport, NamesWhatIsMissingOrUnfinished) {
  const std::string dir = test::make_temp_dir("paper_report3");
  write_variant(dir, "absolute", base_model(true, "none"));
  write_variant(dir, "tisa", base_model(false, "tisa"));
  const json mrpc_metrics = {"acc", "f1", "acc_and_f1"};
  write_glue(dir, "absolute", "RTE", "acc", {{1, 0.69}});
  write_dev_predictions(dir, "absolute", "RTE", 1, 20, 6);
  write_glue(dir, "absolute", "MRPC", "acc_and_f1", {{1, 0.80}});
  write_dev_predictions(dir, "absolute", "MRPC", 1, 20, 4, "mrpc", mrpc_metrics);
  write_glue(dir, "tisa", "RTE", "acc", {{1, 0.60}});
  write_dev_predictions(dir, "tisa", "RTE", 1, 20, 8);
  fs::create_directories(dir + "/glue/tisa/MRPC/seed-1");  // a fine-tuning that did not finish
  PaperReportOptions o;
  o.dir = dir;
  EXPECT_EQ(collect_paper_results(o)["incomplete"], json({"glue/tisa/MRPC has no results.json (unfinished)"}));
  write_glue(dir, "tisa", "MRPC", "acc_and_f1", {{1, 0.70}});
  // A seed without its dev predictions would leave the paired tests a seed short: named, not skipped.
  EXPECT_EQ(collect_paper_results(o)["incomplete"], json({"glue/tisa/MRPC/seed-1 has no dev_predictions.json"}));
  write_dev_predictions(dir, "tisa", "MRPC", 1, 20, 6, "mrpc", mrpc_metrics);
  EXPECT_EQ(collect_paper_results(o)["incomplete"], json::array());
  std::filesystem::remove_all(dir + "/glue/tisa/MRPC");
  EXPECT_EQ(collect_paper_results(o)["incomplete"], json({"glue/tisa/MRPC is missing"}));
  std::filesystem::remove(dir + "/pretrain/tisa/final/model.safetensors");
  EXPECT_EQ(collect_paper_results(o)["incomplete"],
            json({"pretrain/tisa has no final model (unfinished)", "glue/tisa/MRPC is missing"}));
}

}  // namespace
}  // namespace tisa::report
