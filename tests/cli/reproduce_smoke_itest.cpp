// End-to-end: scripts/reproduce_paper.sh --scale smoke on the bundled sample (alice.txt and a
// small slice of the bundled SST-2) with 3 seeds writes the results table with every variant,
// the positional parameter counts of SPEC §1/§2, GLUE median/std over the seeds and the length
// columns (absolute past its 128-row table: n/a); a second call resumes (skips finished stages,
// re-runs removed ones, continues a pretraining from its checkpoint); other settings in the same
// folder are refused; the archive it leaves regenerates the report byte for byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>
#include <vector>

#include "support/test_paths.h"

namespace {

using tisa::test::bin_dir;
using tisa::test::file_exists;
using tisa::test::make_temp_dir;
using tisa::test::source_dir;
namespace stdfs = std::filesystem;

using tisa::test::run;

using tisa::test::slurp;

// The first `rows` data rows (plus the header) of `src` into `dst`.
void head_tsv(const std::string& src, const std::string& dst, int rows) {
  std::ifstream in(src);
  std::ofstream out(dst);
  std::string line;
  for (int i = 0; i <= rows && std::getline(in, line); ++i) out << line << "\n";
}

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// The script and the bundled sample every test below runs on, or why they cannot run here.
struct SmokeInputs {
  std::string script = source_dir() + "/scripts/reproduce_paper.sh";
  std::string corpus = source_dir() + "/data/sample/corpus/alice.txt";
  std::string sst2 = source_dir() + "/data/sample/glue/SST-2";
  std::string missing() const {
    for (const auto& f : {script, corpus, sst2 + "/train.tsv", sst2 + "/dev.tsv"})
      if (!file_exists(f)) return "needed file not found: " + f;
    if (run("command -v bash > /dev/null && command -v flock > /dev/null") != 0) return "bash or flock not found";
    return "";
  }
  // DIR/glue/SST-2 with the first rows of the sample's train and dev files; returns DIR/glue.
  std::string glue_dir(const std::string& dir, int train_rows, int dev_rows) const {
    const std::string glue = dir + "/glue";
    stdfs::create_directories(glue + "/SST-2");
    head_tsv(sst2 + "/train.tsv", glue + "/SST-2/train.tsv", train_rows);
    head_tsv(sst2 + "/dev.tsv", glue + "/SST-2/dev.tsv", dev_rows);
    return glue;
  }
};

// The script's default variants: the paper's four, then every other scheme of the binary's
// registry (`tisa-train model schemes`) alone.
std::vector<std::string> default_variants(const std::string& dir) {
  std::vector<std::string> out = {"absolute", "absolute_tisa", "tisa", "shaw"};
  if (run(bin_dir() + "/tisa-train model schemes > " + dir + "/schemes.txt") != 0) return {};
  std::stringstream schemes(slurp(dir + "/schemes.txt"));
  for (std::string s; std::getline(schemes, s);)
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  return out;
}

}  // namespace

TEST(ReproduceSmoke, WritesTheTableAndResumes) {
  const SmokeInputs in;
  if (const auto why = in.missing(); !why.empty()) GTEST_SKIP() << why;
  const std::string &script = in.script, &corpus = in.corpus;

  const std::string dir = make_temp_dir("reproduce_smoke"), out = dir + "/out";
  const std::string glue = in.glue_dir(dir, 160, 64);
  const std::string base = "bash " + script + " --scale smoke --glue-dir " + glue + " --corpus " + corpus +
                           " --out " + out + " --bin " + bin_dir();

  ASSERT_EQ(run(base + " --seeds 1,2,3 > " + dir + "/log1.txt 2>&1"), 0) << slurp(dir + "/log1.txt");
  const std::string md = slurp(out + "/results.md");
  ASSERT_FALSE(md.empty()) << slurp(dir + "/log1.txt");
  const auto variants = default_variants(dir);
  ASSERT_GE(variants.size(), 11u);  // the paper's four and at least the seven other schemes of today
  for (const auto& v : variants) EXPECT_TRUE(contains(md, "| " + v + " |")) << v << "\n" << md;
  EXPECT_TRUE(contains(md, "L=64 (1×)")) << md;
  // The page states the run's times from what the script measured, not by hand.
  for (const char* key : {"wall time of this call (s)", "stage time, pretraining (s)", "stage time, GLUE (s)",
                          "stage time, length evaluation (s)"})
    EXPECT_TRUE(contains(md, std::string("- ") + key + ": ")) << key << "\n" << md;
  EXPECT_TRUE(contains(md, "L=256 (4×)")) << md;
  EXPECT_TRUE(contains(md, "n/a: absolute table has 128 rows")) << md;
  EXPECT_TRUE(contains(md, "SST-2")) << md;
  EXPECT_TRUE(contains(md, "- command: scripts/reproduce_paper.sh --scale smoke")) << md;

  // Paired comparisons with absolute (one per other variant on SST-2) and the two pictures.
  EXPECT_TRUE(contains(md, "## Paired comparison with absolute")) << md;
  EXPECT_TRUE(contains(md, "**Significance.**")) << md;
  EXPECT_TRUE(file_exists(out + "/glue_differences.svg"));
  EXPECT_TRUE(file_exists(out + "/pretraining.svg"));
  EXPECT_TRUE(file_exists(out + "/glue/tisa/SST-2/seed-2/dev_predictions.json"));

  const auto r = nlohmann::json::parse(slurp(out + "/results.json"));
  EXPECT_EQ(r["tasks"], nlohmann::json({"SST-2"}));
  ASSERT_EQ(r["comparisons"].size(), variants.size() - 1);
  for (const auto& c : r["comparisons"]) {
    EXPECT_EQ(c["seeds"], nlohmann::json({1, 2, 3}));
    EXPECT_EQ(c["examples"], 64);
    EXPECT_LE(c["low"].get<double>(), c["difference"].get<double>());
    EXPECT_GE(c["high"].get<double>(), c["difference"].get<double>());
  }
  ASSERT_EQ(r["variants"].size(), variants.size());
  // Tiny ALBERT (E 32, H 64, 2 layers, 2 heads, d 32) with P = 128: absolute P·E = 4096;
  // TISA 3·S·H·L = 3·5·2·2 = 60; Shaw 2·(2k+1)·d·L = 2·33·32·2 = 4224; T5 32 buckets·H·L = 128;
  // KERPLE-log 2·H·L = 8; FIRE ((1+1)·32 + (32+1)·2 + 2)·L = 264; rope, alibi, sinusoidal none.
  const std::map<std::string, int64_t> expected_params = {
      {"absolute", 4096}, {"absolute_tisa", 4156}, {"tisa", 60}, {"shaw", 4224}, {"none", 0},
      {"rope", 0},        {"alibi", 0},            {"t5", 128},  {"kerple_log", 8}, {"fire", 264},
      {"sinusoidal", 0}};
  for (const auto& v : r["variants"]) {
    const std::string name = v["name"];
    SCOPED_TRACE(name);
    if (const auto it = expected_params.find(name); it != expected_params.end()) {  // a newer scheme: its own test
      EXPECT_EQ(v["positional_parameters"].get<int64_t>(), it->second);
    }
    EXPECT_TRUE(v["pretrained"].get<bool>());
    EXPECT_EQ(v["pretrain_eval"]["step"], 20);
    ASSERT_TRUE(v["glue"].contains("SST-2"));
    const auto& g = v["glue"]["SST-2"];
    EXPECT_EQ(g["seeds"], nlohmann::json({1, 2, 3}));
    EXPECT_EQ(g["main_metric"], "acc");
    for (const auto& x : g["values"]) {
      EXPECT_GE(x.get<double>(), 0.0);
      EXPECT_LE(x.get<double>(), 1.0);
    }
    EXPECT_EQ(v["glue_average"]["n"], 3);
    ASSERT_EQ(v["length"].size(), 3u);
    const bool absolute = name.rfind("absolute", 0) == 0;
    for (int i = 0; i < 3; ++i) {
      const auto& row = v["length"][i];
      EXPECT_EQ(row["seq_length"], 64 << i);
      const bool available = !(absolute && i == 2);
      EXPECT_EQ(row["available"].get<bool>(), available) << row.dump();
      if (available) {
        EXPECT_TRUE(std::isfinite(row["mlm_loss"].get<double>()));
        EXPECT_GT(row["examples"].get<int64_t>(), 0);
      } else {
        EXPECT_EQ(row["reason"], "n/a: absolute table has 128 rows");
      }
    }
  }

  // The archive the script leaves (scripts/archive_reproduction.sh) holds what the report read,
  // dev predictions compressed and models as hashes, and regenerates the report byte for byte.
  const std::string archive = out + "/archive";
  ASSERT_TRUE(file_exists(archive + "/ARCHIVE.md")) << slurp(dir + "/log1.txt");
  EXPECT_TRUE(file_exists(archive + "/glue/tisa/SST-2/seed-2/dev_predictions.json.gz"));
  EXPECT_FALSE(file_exists(archive + "/glue/tisa/SST-2/seed-2/dev_predictions.json"));
  EXPECT_TRUE(file_exists(archive + "/pretrain/tisa/final/model.safetensors.sha256"));
  EXPECT_FALSE(file_exists(archive + "/pretrain/tisa/final/model.safetensors"));
  const std::string regen = dir + "/regenerated";
  stdfs::create_directories(regen);
  const std::string report = bin_dir() + "/tisa-train report --dir " + archive + " --settings-from " + archive +
                             "/results.json --out " + regen + "/results.md --json " + regen + "/results.json";
  ASSERT_EQ(run(report + " --figure " + regen + "/glue_differences.svg --pretraining-figure " + regen +
                "/pretraining.svg > " + dir + "/regen.txt 2>&1"),
            0)
      << slurp(dir + "/regen.txt");
  for (const char* f : {"results.md", "results.json", "glue_differences.svg", "pretraining.svg"}) {
    EXPECT_EQ(slurp(regen + "/" + f), slurp(out + "/" + f)) << f;
    EXPECT_EQ(slurp(archive + "/" + f), slurp(out + "/" + f)) << f;
  }
  // A seed whose dev predictions are gone is a gap the report names (and exits 1 for), not a
  // comparison silently made with fewer seeds.
  stdfs::remove(archive + "/glue/shaw/SST-2/seed-3/dev_predictions.json.gz");
  EXPECT_NE(run(report + " > " + dir + "/regen2.txt 2>&1"), 0);
  EXPECT_TRUE(contains(slurp(dir + "/regen2.txt"), "glue/shaw/SST-2/seed-3 has no dev_predictions.json"))
      << slurp(dir + "/regen2.txt");
  // A truncated archive file is named.
  {
    const std::string gz = archive + "/glue/tisa/SST-2/seed-1/dev_predictions.json.gz";
    const std::string bytes = slurp(gz);
    std::ofstream(gz, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() / 2);
  }
  EXPECT_NE(run(report + " > " + dir + "/regen3.txt 2>&1"), 0);
  EXPECT_TRUE(contains(slurp(dir + "/regen3.txt"), "seed-1/dev_predictions.json.gz: gzip data is corrupt or truncated"))
      << slurp(dir + "/regen3.txt");

  // One TensorBoard log directory: `tensorboard --logdir OUT` finds every variant's pretraining
  // and every GLUE seed, named by variant/task/seed, each in the hparams table (issue 35).
  const std::string py = tisa::test::hf_python(), reader = source_dir() + "/tests/tensorboard/read_events.py";
  if (py.empty() || !file_exists(py) || run("'" + py + "' '" + reader + "' check > /dev/null 2>&1") != 0) {
    std::cout << "[  SKIPPED ] the TensorBoard log directory check: no Python with tensorboard ('" << py << "')\n";
  } else {
    ASSERT_EQ(run("'" + py + "' '" + reader + "' logdir '" + out + "' --summary '" + dir + "/tb.json' > '" + dir +
                  "/tb.log' 2>&1"),
              0)
        << slurp(dir + "/tb.log");
    const auto runs = nlohmann::json::parse(slurp(dir + "/tb.json"))["runs"];
    for (const auto& v : r["variants"]) {
      const std::string name = v["name"];
      const std::string pre = "pretrain/" + name + "/tensorboard";
      ASSERT_TRUE(runs.contains(pre)) << pre << "\n" << runs.dump(1);
      EXPECT_EQ(runs[pre]["kind"], "pretrain");
      EXPECT_TRUE(runs[pre]["final"].size() > 0) << pre;
      for (int seed = 1; seed <= 3; ++seed) {
        const std::string g = "glue/" + name + "/SST-2/seed-" + std::to_string(seed) + "/tensorboard";
        ASSERT_TRUE(runs.contains(g)) << g << "\n" << runs.dump(1);
        EXPECT_EQ(runs[g]["kind"], "glue");
        EXPECT_EQ(runs[g]["final"], nlohmann::json({"final/acc", "final/best_step"})) << g;
      }
    }
    EXPECT_EQ(runs.size(), variants.size() * 4u) << runs.dump(1);
    EXPECT_TRUE(contains(slurp(dir + "/log1.txt"), "tensorboard --logdir " + out)) << slurp(dir + "/log1.txt");
  }

  // Resume: finished stages are skipped; removed ones run again; a pretraining whose final model
  // is gone continues from its checkpoint. With --jobs 2 the stages run in the background
  // (nproc/2 threads each), logging to out/logs/.
  stdfs::remove(out + "/stages/glue-none-SST-2.done");
  stdfs::remove(out + "/stages/length-tisa.done");
  stdfs::remove(out + "/stages/pretrain-shaw.done");
  stdfs::remove_all(out + "/pretrain/shaw/final");
  stdfs::remove(out + "/results.md");
  ASSERT_EQ(run(base + " --seeds 1,2,3 --jobs 2 > " + dir + "/log2.txt 2>&1"), 0) << slurp(dir + "/log2.txt");
  std::string log2 = slurp(dir + "/log2.txt");
  for (const char* stage : {"pretrain-shaw", "length-tisa", "glue-none-SST-2"}) {
    const std::string stage_log = out + "/logs/" + stage + ".log";
    EXPECT_TRUE(contains(log2, std::string("=== ") + stage + " (background, ")) << log2;
    ASSERT_TRUE(file_exists(stage_log)) << stage_log;
    log2 += slurp(stage_log);  // the stages' own lines
  }
  EXPECT_TRUE(contains(log2, "skip tokenizer (done)")) << log2;
  EXPECT_TRUE(contains(log2, "skip pretrain-absolute (done)")) << log2;
  EXPECT_TRUE(contains(log2, "skip glue-tisa-SST-2 (done)")) << log2;
  EXPECT_TRUE(contains(log2, "=== pretrain-shaw")) << log2;
  EXPECT_TRUE(contains(log2, "resuming")) << log2;
  EXPECT_TRUE(contains(log2, "=== length-tisa")) << log2;
  EXPECT_TRUE(contains(log2, "=== glue-none-SST-2")) << log2;
  EXPECT_FALSE(contains(log2, "=== pretrain-absolute")) << log2;
  EXPECT_TRUE(file_exists(out + "/pretrain/shaw/final/model.safetensors"));
  EXPECT_TRUE(file_exists(out + "/results.md"));

  // The same folder with other settings is refused.
  EXPECT_NE(run(base + " --seeds 1,2 > " + dir + "/log3.txt 2>&1"), 0);
  EXPECT_TRUE(contains(slurp(dir + "/log3.txt"), "made with other settings")) << slurp(dir + "/log3.txt");
}

// Every GLUE task of a variant writes under the same run folder (OUT/glue/V), which tisa-train
// holds for the whole of a run. With --jobs 2 the two tasks of the only variant start together:
// they must take turns, not refuse each other (the script used to fail the second with "in use").
TEST(ReproduceSmoke, ParallelTasksOfOneVariantTakeTurns) {
  const SmokeInputs in;
  if (const auto why = in.missing(); !why.empty()) GTEST_SKIP() << why;
  const std::string &script = in.script, &corpus = in.corpus, &sst2 = in.sst2;

  const std::string dir = make_temp_dir("reproduce_jobs"), out = dir + "/out";
  const std::string glue = in.glue_dir(dir, 64, 32);
  stdfs::create_directories(glue + "/RTE");
  // A small RTE in the official columns, built from SST-2's sentences: a sentence entails itself.
  std::vector<std::string> sentences;
  {
    std::ifstream train(sst2 + "/train.tsv");
    std::string line;
    std::getline(train, line);  // header
    while (sentences.size() < 80 && std::getline(train, line)) sentences.push_back(line.substr(0, line.find('\t')));
  }
  ASSERT_EQ(sentences.size(), 80u);
  for (const auto& [split, first, count] : {std::tuple<std::string, size_t, size_t>{"train", 0, 48}, {"dev", 48, 16}}) {
    std::ofstream tsv(glue + "/RTE/" + split + ".tsv");
    tsv << "index\tsentence1\tsentence2\tlabel\n";
    for (size_t i = 0; i < count; ++i) {
      const size_t a = first + i, b = i % 2 ? a : a + 16;
      tsv << i << "\t" << sentences[a] << "\t" << sentences[b] << "\t" << (a == b ? "entailment" : "not_entailment")
          << "\n";
    }
  }

  const std::string cmd = "bash " + script + " --scale smoke --glue-dir " + glue + " --corpus " + corpus + " --out " +
                          out + " --bin " + bin_dir() + " --seeds 1 --variants none --tasks SST-2,RTE --jobs 2 > " +
                          dir + "/log.txt 2>&1";
  ASSERT_EQ(run(cmd), 0) << slurp(dir + "/log.txt") << slurp(out + "/logs/glue-none-SST-2.log")
                         << slurp(out + "/logs/glue-none-RTE.log");
  const std::string log = slurp(dir + "/log.txt");
  EXPECT_TRUE(contains(log, "=== glue-none-SST-2 (background, ")) << log;
  EXPECT_TRUE(contains(log, "=== glue-none-RTE (background, ")) << log;
  EXPECT_TRUE(file_exists(out + "/glue/none/SST-2/results.json"));
  EXPECT_TRUE(file_exists(out + "/glue/none/RTE/results.json"));
  EXPECT_TRUE(contains(slurp(out + "/results.md"), "RTE")) << slurp(out + "/results.md");
}

// A variant's fine-tunings wait only for its own pretraining (no barrier after all of them), and
// a failed pretraining stops the stages that wait for it instead of leaving them waiting: with a
// corrupt checkpoint in tisa's run folder, tisa's pretraining fails, none's fine-tuning still
// completes, and the script ends with an error that names the failed stage.
TEST(ReproduceSmoke, AFailedPretrainingStopsOnlyItsOwnStages) {
  const SmokeInputs in;
  if (const auto why = in.missing(); !why.empty()) GTEST_SKIP() << why;
  const std::string &script = in.script, &corpus = in.corpus;

  const std::string dir = make_temp_dir("reproduce_fail"), out = dir + "/out";
  const std::string glue = in.glue_dir(dir, 64, 32);
  const std::string checkpoint = out + "/pretrain/tisa/checkpoints/step-000001";
  stdfs::create_directories(checkpoint);
  std::ofstream(checkpoint + "/model.safetensors") << "not a checkpoint";

  const std::string cmd = "bash " + script + " --scale smoke --glue-dir " + glue + " --corpus " + corpus + " --out " +
                          out + " --bin " + bin_dir() + " --seeds 1 --variants none,tisa --tasks SST-2 --jobs 2 > " +
                          dir + "/log.txt 2>&1";
  EXPECT_NE(run(cmd), 0);
  const std::string log = slurp(dir + "/log.txt");
  EXPECT_TRUE(file_exists(out + "/stages/pretrain-none.done")) << log;
  EXPECT_TRUE(file_exists(out + "/glue/none/SST-2/results.json")) << log << slurp(out + "/logs/glue-none-SST-2.log");
  EXPECT_FALSE(file_exists(out + "/stages/pretrain-tisa.done")) << log;
  EXPECT_FALSE(file_exists(out + "/stages/glue-tisa-SST-2.done")) << log;
  EXPECT_TRUE(contains(slurp(out + "/logs/glue-tisa-SST-2.log"), "stage pretrain-tisa failed"))
      << slurp(out + "/logs/glue-tisa-SST-2.log");
  EXPECT_TRUE(contains(log, "stages failed")) << log;
}
