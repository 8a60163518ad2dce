// End-to-end GLUE: `tisa-train glue / eval / predict` and `prepare glue` through the built
// executables, with a tiny randomly initialised ALBERT written by the test (HF layout:
// config.json + model.safetensors + vocab.txt).
//
//  * SST-2 subset (the bundled sample): fine-tuning must reach clearly above-chance dev accuracy;
//    eval and predict on the fine-tuned folder must agree with the fine-tuning's own numbers.
//  * `all` on a data folder holding only RTE, STS-B (real files from shared/) and small MNLI and
//    QQP files written here: the others are skipped; leaderboard files have the official row
//    counts, the label strings, STS-B clipped to [0, 5] with 3 decimals, MNLI-m/-mm and AX.
//  * several seeds: per-metric mean/std/median; `prepare glue` is a no-op when nothing changed.
//  * issue 16: SIGTERM makes `glue` save a checkpoint and exit 130; `glue --resume` after that,
//    or after SIGKILL, ends bit-identical to an uninterrupted run (weights, optimiser, best model,
//    results).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "common/fs.h"
#include "io/safetensors.h"
#include "support/child_process.h"
#include "support/test_paths.h"

extern char** environ;

namespace {

namespace stdfs = std::filesystem;
using nlohmann::json;

struct CmdResult {
  int rc = -1;
  std::string output;
};

// Runs a command line through the shell, output (stdout + stderr) captured in a file.
CmdResult run(const std::string& args, const std::string& log) {
  std::string cmd = "OMP_WAIT_POLICY=PASSIVE " + tisa::test::bin_dir() + "/tisa-train " + args + " > " + log + " 2>&1";
  int status = std::system(cmd.c_str());
  CmdResult r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.output = tisa::fs::read_file(log);
  return r;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::vector<std::string> split_tab(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string f;
  while (std::getline(ss, f, '\t')) out.push_back(f);
  return out;
}

// A WordPiece vocabulary: specials, the most frequent lower-cased words of `texts`, and single
// characters (plain and ## forms) so that every word can be spelt.
std::vector<std::string> make_vocab(const std::vector<std::string>& texts, size_t words) {
  std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  std::set<std::string> have(vocab.begin(), vocab.end());
  auto add = [&](const std::string& t) {
    if (have.insert(t).second) vocab.push_back(t);
  };
  for (char c = 33; c < 127; ++c) {
    char lc = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    add(std::string(1, lc));
    if (std::isalnum(static_cast<unsigned char>(lc))) add("##" + std::string(1, lc));
  }
  std::map<std::string, int> counts;
  for (const auto& t : texts) {
    std::string w;
    for (char c : t + " ") {
      if (std::isalnum(static_cast<unsigned char>(c))) {
        w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      } else {
        if (!w.empty()) ++counts[w];
        w.clear();
      }
    }
  }
  std::vector<std::pair<int, std::string>> by_count;
  for (const auto& [w, n] : counts) by_count.emplace_back(-n, w);
  std::sort(by_count.begin(), by_count.end());
  for (size_t i = 0; i < by_count.size() && i < words; ++i) add(by_count[i].second);
  return vocab;
}

tisa::io::RawTensor tensor(const std::vector<int64_t>& shape, std::mt19937& rng, double std, double fill = 0) {
  tisa::io::RawTensor t;
  t.dtype = tisa::io::DType::kF32;
  t.shape = shape;
  int64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n), static_cast<float>(fill));
  std::normal_distribution<double> normal(0.0, std);
  if (std > 0)
    for (auto& x : v) x = static_cast<float>(normal(rng));
  t.data.assign(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  return t;
}

// A tiny AlbertForPreTraining folder (random N(0, 0.02) weights, LayerNorm 1/0) with vocab.txt.
void write_tiny_albert(const std::string& dir, const std::vector<std::string>& vocab, uint32_t seed = 1) {
  tisa::fs::create_directories(dir);
  const int64_t V = static_cast<int64_t>(vocab.size()), E = 32, H = 64, I = 128, P = 128;
  json cfg = {{"architectures", {"AlbertForPreTraining"}},
              {"model_type", "albert"},
              {"vocab_size", V},
              {"embedding_size", E},
              {"hidden_size", H},
              {"num_hidden_layers", 2},
              {"num_hidden_groups", 1},
              {"inner_group_num", 1},
              {"num_attention_heads", 4},
              {"intermediate_size", I},
              {"hidden_act", "gelu_new"},
              {"hidden_dropout_prob", 0.0},
              {"attention_probs_dropout_prob", 0.0},
              {"classifier_dropout_prob", 0.1},
              {"max_position_embeddings", P},
              {"type_vocab_size", 2},
              {"layer_norm_eps", 1e-12},
              {"initializer_range", 0.02},
              {"pad_token_id", 0},
              {"position_embedding_type", "absolute"}};
  tisa::fs::write_file_atomic(dir + "/config.json", cfg.dump(2));
  std::mt19937 rng(seed);
  tisa::io::SafeTensors st;
  auto& t = st.tensors;
  const double r = 0.02;
  t["albert.embeddings.word_embeddings.weight"] = tensor({V, E}, rng, r);
  t["albert.embeddings.position_embeddings.weight"] = tensor({P, E}, rng, r);
  t["albert.embeddings.token_type_embeddings.weight"] = tensor({2, E}, rng, r);
  t["albert.embeddings.LayerNorm.weight"] = tensor({E}, rng, 0, 1);
  t["albert.embeddings.LayerNorm.bias"] = tensor({E}, rng, 0);
  t["albert.encoder.embedding_hidden_mapping_in.weight"] = tensor({H, E}, rng, r);
  t["albert.encoder.embedding_hidden_mapping_in.bias"] = tensor({H}, rng, 0);
  const std::string l = "albert.encoder.albert_layer_groups.0.albert_layers.0.";
  for (const char* m : {"query", "key", "value", "dense"}) {
    t[l + "attention." + m + ".weight"] = tensor({H, H}, rng, r);
    t[l + "attention." + m + ".bias"] = tensor({H}, rng, 0);
  }
  t[l + "attention.LayerNorm.weight"] = tensor({H}, rng, 0, 1);
  t[l + "attention.LayerNorm.bias"] = tensor({H}, rng, 0);
  t[l + "ffn.weight"] = tensor({I, H}, rng, r);
  t[l + "ffn.bias"] = tensor({I}, rng, 0);
  t[l + "ffn_output.weight"] = tensor({H, I}, rng, r);
  t[l + "ffn_output.bias"] = tensor({H}, rng, 0);
  t[l + "full_layer_layer_norm.weight"] = tensor({H}, rng, 0, 1);
  t[l + "full_layer_layer_norm.bias"] = tensor({H}, rng, 0);
  t["albert.pooler.weight"] = tensor({H, H}, rng, r);
  t["albert.pooler.bias"] = tensor({H}, rng, 0);
  t["predictions.dense.weight"] = tensor({E, H}, rng, r);
  t["predictions.dense.bias"] = tensor({E}, rng, 0);
  t["predictions.LayerNorm.weight"] = tensor({E}, rng, 0, 1);
  t["predictions.LayerNorm.bias"] = tensor({E}, rng, 0);
  t["predictions.bias"] = tensor({V}, rng, 0);
  t["sop_classifier.classifier.weight"] = tensor({2, H}, rng, r);
  t["sop_classifier.classifier.bias"] = tensor({2}, rng, 0);
  tisa::io::write_safetensors(dir + "/model.safetensors", st);
  std::string v;
  for (const auto& w : vocab) v += w + "\n";
  tisa::fs::write_file_atomic(dir + "/vocab.txt", v);
}

std::vector<std::string> column(const std::string& tsv, size_t col, bool header) {
  std::vector<std::string> out;
  auto lines = read_lines(tsv);
  for (size_t i = header ? 1 : 0; i < lines.size(); ++i) {
    auto f = split_tab(lines[i]);
    if (f.size() > col) out.push_back(f[col]);
  }
  return out;
}

void copy_task(const std::string& from_root, const std::string& to_root, const std::string& task) {
  tisa::fs::create_directories(to_root + "/" + task);
  for (const auto& e : stdfs::directory_iterator(from_root + "/" + task))
    stdfs::copy_file(e.path(), stdfs::path(to_root) / task / e.path().filename());
}

// Small MNLI files (train, dev_matched, dev_mismatched, test_matched, test_mismatched) and a
// diagnostic file, in the official column layout.
void write_small_mnli(const std::string& root, int rows) {
  const std::string dir = root + "/MNLI";
  tisa::fs::create_directories(dir);
  const char* labels[] = {"contradiction", "entailment", "neutral"};
  const std::string head12 =
      "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\tsentence1_parse\t"
      "sentence2_parse\tsentence1\tsentence2";
  auto row = [&](int i, int extra_labels, bool labelled) {
    std::string s = std::to_string(i) + "\t" + std::to_string(1000 + i) + "\t" + std::to_string(i) + "e\tfiction\t( a )\t( b )\t(ROOT a)\t(ROOT b)\t";
    s += "the cat number " + std::to_string(i % 7) + " sat on the mat\t";
    s += (i % 3 == 0 ? "no cat sat" : i % 3 == 1 ? "a cat sat" : "a cat may have sat");
    if (labelled) {
      s += "\t";
      s += labels[i % 3];
      for (int k = 0; k < extra_labels; ++k) s += std::string("\t") + labels[i % 3];
      s += std::string("\t") + labels[i % 3];
    }
    return s + "\n";
  };
  std::string train = head12 + "\tlabel1\tgold_label\n", devm = head12 + "\tlabel1\tlabel2\tlabel3\tlabel4\tlabel5\tgold_label\n";
  std::string devmm = devm, testm = head12 + "\n", testmm = head12 + "\n";
  for (int i = 0; i < rows; ++i) {
    train += row(i, 0, true);
    devm += row(i, 4, true);
    devmm += row(i + 1, 4, true);
    testm += row(i, 0, false);
    testmm += row(i + 2, 0, false);
  }
  tisa::fs::write_file_atomic(dir + "/train.tsv", train);
  tisa::fs::write_file_atomic(dir + "/dev_matched.tsv", devm);
  tisa::fs::write_file_atomic(dir + "/dev_mismatched.tsv", devmm);
  tisa::fs::write_file_atomic(dir + "/test_matched.tsv", testm);
  tisa::fs::write_file_atomic(dir + "/test_mismatched.tsv", testmm);
  tisa::fs::create_directories(root + "/diagnostic");
  std::string diag = "index\tsentence1\tsentence2\n";
  for (int i = 0; i < 13; ++i) diag += std::to_string(i) + "\tthe dog barked\tthe dog was " + (i % 2 ? "loud" : "quiet") + "\n";
  tisa::fs::write_file_atomic(root + "/diagnostic/diagnostic.tsv", diag);
}

// Small QQP files, including one of the short rows the official train file has (skipped).
void write_small_qqp(const std::string& root, int rows) {
  const std::string dir = root + "/QQP";
  tisa::fs::create_directories(dir);
  std::string train = "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n";
  std::string dev = train, test = "id\tquestion1\tquestion2\n";
  for (int i = 0; i < rows; ++i) {
    std::string q1 = "how do i learn " + std::to_string(i % 5) + " things";
    std::string q2 = i % 2 ? q1 : "what is the capital of france";
    train += std::to_string(i) + "\t" + std::to_string(2 * i) + "\t" + std::to_string(2 * i + 1) + "\t" + q1 + "\t" + q2 +
             "\t" + (i % 2 ? "1" : "0") + "\n";
    dev += std::to_string(i) + "\t1\t2\t" + q1 + "\t" + q2 + "\t" + (i % 2 ? "1" : "0") + "\n";
    test += std::to_string(i) + "\t" + q1 + "\t" + q2 + "\n";
  }
  train += "999\t1\t2\tbroken row without the other columns\n";
  tisa::fs::write_file_atomic(dir + "/train.tsv", train);
  tisa::fs::write_file_atomic(dir + "/dev.tsv", dev);
  tisa::fs::write_file_atomic(dir + "/test.tsv", test);
}

json read_json(const std::string& path) { return json::parse(tisa::fs::read_file(path)); }

}  // namespace

// Fine-tunes a tiny random ALBERT on an SST-2 subset; it must learn sentiment words.
TEST(GlueEndToEnd, Sst2SubsetLearnsAndEvalPredictAgree) {
  const std::string sample = tisa::test::source_dir() + "/data/sample/glue";
  ASSERT_TRUE(tisa::test::file_exists(sample + "/SST-2/train.tsv")) << sample;
  const std::string tmp = tisa::test::make_temp_dir("glue_sst2");
  const std::string glue_dir = tmp + "/glue";
  copy_task(sample, glue_dir, "SST-2");
  const std::string init = tmp + "/init";
  write_tiny_albert(init, make_vocab(column(glue_dir + "/SST-2/train.tsv", 0, true), 3000));

  const std::string run_dir = tmp + "/run";
  CmdResult r = run("glue --task SST-2 --data-dir " + glue_dir + " --init " + init + " --run-dir " + run_dir +
                  " --seeds 1 --set glue.lr=1e-3 --set glue.batch_size=32 --set glue.steps=800"
                  " --set glue.warmup_steps=80 --set glue.max_length=64 --set glue.eval_interval=200"
                  " --set glue.weight_decay=0.01 --set training.log_interval=50",
              tmp + "/glue.log");
  ASSERT_EQ(r.rc, 0) << r.output;
  const json task = read_json(run_dir + "/SST-2/results.json");
  const double acc = task["summary"]["acc"]["mean"].get<double>();
  EXPECT_GE(acc, 0.70) << "dev accuracy " << acc << " (chance is ~0.5)\n" << r.output;
  EXPECT_EQ(task["main_metric"], "acc");

  // The seed folder: results, metrics stream, resolved config, best model with the task recorded.
  const std::string seed_dir = run_dir + "/SST-2/seed-1";
  const json seed = read_json(seed_dir + "/results.json");
  EXPECT_EQ(seed["history"].size(), 4u);  // steps 200, 400, 600, 800
  EXPECT_TRUE(tisa::test::file_exists(seed_dir + "/metrics.jsonl"));
  EXPECT_TRUE(tisa::test::file_exists(seed_dir + "/config.yaml"));
  EXPECT_TRUE(tisa::test::file_exists(seed_dir + "/train.log"));
  const json cfg = read_json(seed_dir + "/best/config.json");
  EXPECT_EQ(cfg["finetuning_task"], "SST-2");
  EXPECT_EQ(cfg["num_labels"], 2);
  EXPECT_EQ(cfg["id2label"]["1"], "1");
  EXPECT_EQ(cfg["architectures"][0], "AlbertForSequenceClassification");
  EXPECT_TRUE(tisa::test::file_exists(seed_dir + "/best/vocab.txt"));

  // Leaderboard file of the test split (the sample has 200 test rows).
  auto lb = read_lines(run_dir + "/leaderboard/SST-2.tsv");
  ASSERT_EQ(lb.size(), 201u);
  EXPECT_EQ(lb[0], "index\tprediction");
  for (size_t i = 1; i < lb.size(); ++i) {
    auto f = split_tab(lb[i]);
    ASSERT_EQ(f.size(), 2u);
    EXPECT_TRUE(f[1] == "0" || f[1] == "1") << lb[i];
  }

  // eval on the best model (task from config.json) reproduces the fine-tuning's dev accuracy.
  CmdResult e = run("eval --model " + seed_dir + "/best --data-dir " + glue_dir + " --output " + tmp + "/eval.json",
              tmp + "/eval.log");
  ASSERT_EQ(e.rc, 0) << e.output;
  const json ev = read_json(tmp + "/eval.json");
  EXPECT_EQ(ev["task"], "SST-2");
  EXPECT_NEAR(ev["metrics"]["acc"].get<double>(), seed["metrics"]["acc"].get<double>(), 1e-9);

  // predict on the dev file (labelled format): 872 rows, and the accuracy printed matches.
  CmdResult p = run("predict --model " + seed_dir + "/best --input " + glue_dir + "/SST-2/dev.tsv --output " + tmp +
                  "/dev_pred.tsv",
              tmp + "/predict.log");
  ASSERT_EQ(p.rc, 0) << p.output;
  auto pred = read_lines(tmp + "/dev_pred.tsv");
  ASSERT_EQ(pred.size(), 873u);
  auto gold = column(glue_dir + "/SST-2/dev.tsv", 1, true);
  ASSERT_EQ(gold.size(), 872u);
  int correct = 0;
  for (size_t i = 0; i < gold.size(); ++i) correct += split_tab(pred[i + 1])[1] == gold[i];
  EXPECT_NEAR(correct / 872.0, ev["metrics"]["acc"].get<double>(), 1e-9);
  // and on the test file (unlabelled format): the ids of the file.
  CmdResult pt = run("predict --model " + seed_dir + "/best --task SST-2 --input " + glue_dir + "/SST-2/test.tsv --output " +
                   tmp + "/test_pred.tsv",
               tmp + "/predict_test.log");
  ASSERT_EQ(pt.rc, 0) << pt.output;
  EXPECT_EQ(read_lines(tmp + "/test_pred.tsv"), lb);
}

// `all` on a folder with only RTE, STS-B, MNLI and QQP: the others are skipped; leaderboard rows.
TEST(GlueEndToEnd, AllTasksPresentWriteLeaderboardFiles) {
  TISA_REQUIRE_SHARED("data/glue/RTE/test.tsv");
  TISA_REQUIRE_SHARED("data/glue/STS-B/test.tsv");
  const std::string tmp = tisa::test::make_temp_dir("glue_all");
  const std::string glue_dir = tmp + "/glue";
  copy_task(tisa::test::shared_path("data/glue"), glue_dir, "RTE");
  copy_task(tisa::test::shared_path("data/glue"), glue_dir, "STS-B");
  write_small_mnli(glue_dir, 60);
  write_small_qqp(glue_dir, 40);
  std::vector<std::string> texts = column(glue_dir + "/RTE/train.tsv", 1, true);
  for (const auto& s : column(glue_dir + "/STS-B/train.tsv", 7, true)) texts.push_back(s);
  const std::string init = tmp + "/init";
  write_tiny_albert(init, make_vocab(texts, 2000));

  const std::string run_dir = tmp + "/run";
  CmdResult r = run("glue --task all --data-dir " + glue_dir + " --init " + init + " --run-dir " + run_dir +
                  " --set glue.steps=3 --set glue.batch_size=8 --set glue.warmup_steps=1 --set glue.max_length=64"
                  " --set glue.eval_batch_size=128",
              tmp + "/all.log");
  ASSERT_EQ(r.rc, 0) << r.output;
  const json all = read_json(run_dir + "/results.json");
  std::set<std::string> ran, skipped;
  for (auto it = all["tasks"].begin(); it != all["tasks"].end(); ++it) ran.insert(it.key());
  for (const auto& s : all["skipped"]) skipped.insert(s.get<std::string>());
  EXPECT_EQ(ran, (std::set<std::string>{"RTE", "STS-B", "MNLI", "QQP"}));
  EXPECT_EQ(skipped, (std::set<std::string>{"CoLA", "SST-2", "MRPC", "QNLI", "WNLI"}));
  EXPECT_NE(r.output.find("skipped"), std::string::npos);

  const std::string lb = run_dir + "/leaderboard/";
  auto rte = read_lines(lb + "RTE.tsv");
  ASSERT_EQ(rte.size(), 3001u);
  EXPECT_EQ(rte[0], "index\tprediction");
  EXPECT_EQ(split_tab(rte[1])[0], "0");
  EXPECT_EQ(split_tab(rte[3000])[0], "2999");
  for (size_t i = 1; i < rte.size(); ++i) {
    const std::string label = split_tab(rte[i])[1];
    ASSERT_TRUE(label == "entailment" || label == "not_entailment") << rte[i];
  }
  auto sts = read_lines(lb + "STS-B.tsv");
  ASSERT_EQ(sts.size(), 1380u);
  for (size_t i = 1; i < sts.size(); ++i) {
    const std::string v = split_tab(sts[i])[1];
    ASSERT_EQ(v.size() - v.find('.'), 4u) << "3 decimals: " << sts[i];
    const double x = std::stod(v);
    ASSERT_TRUE(x >= 0.0 && x <= 5.0) << sts[i];
  }
  const std::set<std::string> nli = {"contradiction", "entailment", "neutral"};
  for (const char* f : {"MNLI-m.tsv", "MNLI-mm.tsv", "AX.tsv"}) {
    auto rows = read_lines(lb + f);
    ASSERT_EQ(rows.size(), std::string(f) == "AX.tsv" ? 14u : 61u) << f;
    for (size_t i = 1; i < rows.size(); ++i) ASSERT_TRUE(nli.count(split_tab(rows[i])[1])) << f << ": " << rows[i];
  }
  auto qqp = read_lines(lb + "QQP.tsv");
  ASSERT_EQ(qqp.size(), 41u);
  // MNLI reports matched and mismatched accuracy; STS-B Pearson and Spearman.
  const json mnli = read_json(run_dir + "/MNLI/results.json");
  EXPECT_TRUE(mnli["summary"].contains("mnli/acc"));
  EXPECT_TRUE(mnli["summary"].contains("mnli-mm/acc"));
  const json stsb = read_json(run_dir + "/STS-B/results.json");
  EXPECT_TRUE(stsb["summary"].contains("pearson"));
  EXPECT_TRUE(stsb["summary"].contains("spearmanr"));
  // QQP's short train row was skipped, not fatal.
  const json qqp_manifest = read_json(run_dir + "/QQP/data/manifest.json");
  EXPECT_EQ(qqp_manifest["splits"]["train"]["skipped_rows"], 1);
  EXPECT_EQ(qqp_manifest["splits"]["train"]["examples"], 40);
}

// Several seeds give a summary with mean/std/median; re-preparing unchanged data is a no-op; an
// HF ALBERT-style folder with spiece.model is accepted as --init.
TEST(GlueEndToEnd, SeedsSummaryCacheAndSentencePieceInit) {
  TISA_REQUIRE_SHARED("data/glue/RTE/train.tsv");
  TISA_REQUIRE_SHARED("data/tokenizers/albert-30k-clean.reconstructed.model");
  const std::string tmp = tisa::test::make_temp_dir("glue_seeds");
  const std::string glue_dir = tmp + "/glue";
  copy_task(tisa::test::shared_path("data/glue"), glue_dir, "RTE");
  // 30000-row embedding for the ALBERT SentencePiece vocabulary (ids must fit).
  std::vector<std::string> vocab(30000, "x");
  const std::string init = tmp + "/init";
  write_tiny_albert(init, vocab);
  stdfs::remove(init + "/vocab.txt");
  stdfs::copy_file(tisa::test::shared_path("data/tokenizers/albert-30k-clean.reconstructed.model"),
                   init + "/spiece.model");

  const std::string run_dir = tmp + "/run";
  const std::string args = "glue --task rte --data-dir " + glue_dir + " --init " + init + " --run-dir " + run_dir +
                           " --seeds 3,4 --set glue.steps=2 --set glue.batch_size=4 --set glue.max_length=32";
  CmdResult r = run(args, tmp + "/seeds.log");
  ASSERT_EQ(r.rc, 0) << r.output;
  const json res = read_json(run_dir + "/RTE/results.json");
  EXPECT_EQ(res["seeds"], json({3, 4}));
  ASSERT_EQ(res["runs"].size(), 2u);
  const double a = res["runs"][0]["metrics"]["acc"].get<double>();
  const double b = res["runs"][1]["metrics"]["acc"].get<double>();
  EXPECT_NEAR(res["summary"]["acc"]["mean"].get<double>(), (a + b) / 2, 1e-12);
  EXPECT_NEAR(res["summary"]["acc"]["median"].get<double>(), (a + b) / 2, 1e-12);
  EXPECT_NEAR(res["summary"]["acc"]["std"].get<double>(), std::abs(a - b) / std::sqrt(2.0), 1e-12);
  EXPECT_NE(r.output.find("median"), std::string::npos) << "summary table printed";
  const json manifest = read_json(run_dir + "/RTE/data/manifest.json");
  EXPECT_EQ(manifest["tokenizer"]["type"], "sentencepiece");

  // Same inputs: prepare is a no-op (the files are not rewritten).
  const auto before = stdfs::last_write_time(run_dir + "/RTE/data/train.bin");
  CmdResult again = run("prepare glue --task RTE --data-dir " + glue_dir + " --tokenizer " + init +
                      "/spiece.model --output " + run_dir + "/RTE/data --max-length 32",
                  tmp + "/prep.log");
  ASSERT_EQ(again.rc, 0) << again.output;
  EXPECT_NE(again.output.find("up to date"), std::string::npos) << again.output;
  EXPECT_EQ(stdfs::last_write_time(run_dir + "/RTE/data/train.bin"), before);
  // Issue 18, class 11: a damaged cached split is rebuilt, not reused on every retry.
  const std::string good = tisa::test::slurp(run_dir + "/RTE/data/train.bin");
  {
    std::fstream f(run_dir + "/RTE/data/train.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-5, std::ios::end);
    char c = 0;
    f.get(c);
    f.seekp(-5, std::ios::end);
    f.put(static_cast<char>(c ^ 0x21));
  }
  CmdResult repaired = run("prepare glue --task RTE --data-dir " + glue_dir + " --tokenizer " + init +
                               "/spiece.model --output " + run_dir + "/RTE/data --max-length 32",
                           tmp + "/prep_repair.log");
  ASSERT_EQ(repaired.rc, 0) << repaired.output;
  EXPECT_NE(repaired.output.find("is missing or damaged"), std::string::npos) << repaired.output;
  EXPECT_EQ(tisa::test::slurp(run_dir + "/RTE/data/train.bin"), good);
  // Another max length is another key.
  CmdResult other = run("prepare glue --task RTE --data-dir " + glue_dir + " --tokenizer " + init +
                      "/spiece.model --output " + run_dir + "/RTE/data --max-length 48",
                  tmp + "/prep2.log");
  ASSERT_EQ(other.rc, 0) << other.output;
  EXPECT_EQ(other.output.find("up to date"), std::string::npos) << other.output;

  // Issue 18, class 2: the same command again would replace the task's results: refused, naming
  // --overwrite; with it, the task is run afresh.
  CmdResult again_run = run(args, tmp + "/again.log");
  EXPECT_EQ(again_run.rc, 1) << again_run.output;
  EXPECT_NE(again_run.output.find(run_dir + "/RTE already holds a GLUE run"), std::string::npos) << again_run.output;
  EXPECT_NE(again_run.output.find("--overwrite"), std::string::npos) << again_run.output;
  EXPECT_TRUE(stdfs::exists(run_dir + "/RTE/results.json"));
  CmdResult overwrite = run(args + " --overwrite", tmp + "/overwrite.log");
  ASSERT_EQ(overwrite.rc, 0) << overwrite.output;
  EXPECT_TRUE(stdfs::exists(run_dir + "/RTE/seed-4/best/model.safetensors"));
}

TEST(GlueEndToEnd, ClearErrors) {
  const std::string tmp = tisa::test::make_temp_dir("glue_err");
  tisa::fs::create_directories(tmp + "/glue");
  write_tiny_albert(tmp + "/init", make_vocab({"a b c"}, 10));
  CmdResult r = run("glue --task SQuAD --data-dir " + tmp + "/glue --init " + tmp + "/init", tmp + "/e1.log");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.output.find("unknown GLUE task"), std::string::npos) << r.output;
  CmdResult none = run("glue --task all --data-dir " + tmp + "/glue --init " + tmp + "/init --run-dir " + tmp + "/run",
                 tmp + "/e2.log");
  EXPECT_EQ(none.rc, 1);
  EXPECT_NE(none.output.find("no GLUE task"), std::string::npos) << none.output;
  CmdResult missing = run("glue --task RTE --data-dir " + tmp + "/glue --init " + tmp + "/init --run-dir " + tmp + "/run",
                    tmp + "/e3.log");
  EXPECT_EQ(missing.rc, 1);
  EXPECT_NE(missing.output.find("train.tsv"), std::string::npos) << missing.output;
  // --data-dir and --init stay required (usage error, exit 2) unless only --print-config is asked.
  CmdResult no_data = run("glue --task RTE --init " + tmp + "/init", tmp + "/e4.log");
  EXPECT_EQ(no_data.rc, 2) << no_data.output;
  EXPECT_NE(no_data.output.find("--data-dir is required"), std::string::npos) << no_data.output;
}

// Issue 16: the task table is the one source of a task's settings; --print-config shows the
// effective ones (table < --set), every key, as YAML that --config accepts back.
TEST(GlueEndToEnd, PrintConfigShowsTheEffectiveSettings) {
  const std::string tmp = tisa::test::make_temp_dir("glue_print_config");
  CmdResult r = run("glue --task MRPC --print-config --set glue.max_length=64", tmp + "/p.log");
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("# tisa-train glue --task MRPC: effective settings (from the GLUE task table"),
            std::string::npos)
      << r.output;
  for (const char* line : {"task: \"MRPC\"", "batch_size: 32", "steps: 800", "warmup_steps: 200", "max_length: 64",
                           "eval_batch_size: 64"})
    EXPECT_NE(r.output.find(line), std::string::npos) << line << "\n" << r.output;
  CmdResult all = run("glue --task all --print-config", tmp + "/all.log");
  ASSERT_EQ(all.rc, 0) << all.output;
  for (const char* task : {"CoLA", "SST-2", "MRPC", "STS-B", "QQP", "MNLI", "QNLI", "RTE", "WNLI"})
    EXPECT_NE(all.output.find(std::string("--task ") + task + ":"), std::string::npos) << task;
}

namespace {

// Issue 18, class 5: NaN is never a result. A model whose STS-B predictions are constant (a zero
// classifier) has a NaN correlation at every evaluation: the run must fail naming the metric and
// the steps, with no "best" model and no results, and say so in its own train.log (class 9).
TEST(GlueEndToEnd, EveryEvaluationNaNIsAnErrorNotABestStep) {
  const std::string tmp = tisa::test::make_temp_dir("glue_nan");
  const std::string dir = tmp + "/glue/STS-B";
  tisa::fs::create_directories(dir);
  const std::string header = "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore\n";
  std::string rows;
  for (int i = 0; i < 8; ++i)
    rows += std::to_string(i) + "\tg\tf\t2012\t" + std::to_string(i) + "\tnone\tnone\ta cat sat " + std::to_string(i) +
            "\ta dog sat\t" + std::to_string(i % 5) + ".0\n";
  tisa::fs::write_file_atomic(dir + "/train.tsv", header + rows);
  tisa::fs::write_file_atomic(dir + "/dev.tsv", header + rows);
  // A fine-tuned STS-B model whose regression head is zero: every prediction is its bias.
  const std::string init = tmp + "/init";
  write_tiny_albert(init, make_vocab({"a cat sat a dog sat"}, 20));
  json cfg = read_json(init + "/config.json");
  cfg["architectures"] = {"AlbertForSequenceClassification"};
  cfg["num_labels"] = 1;
  cfg["id2label"] = {{"0", "LABEL_0"}};
  cfg["label2id"] = {{"LABEL_0", 0}};
  tisa::fs::write_file_atomic(init + "/config.json", cfg.dump(2));
  auto st = tisa::io::read_safetensors(init + "/model.safetensors");
  for (auto it = st.tensors.begin(); it != st.tensors.end();)
    it = it->first.rfind("albert.", 0) == 0 ? std::next(it) : st.tensors.erase(it);
  std::mt19937 rng(3);
  st.tensors["classifier.weight"] = tensor({1, 64}, rng, 0, 0.0);
  st.tensors["classifier.bias"] = tensor({1}, rng, 0, 2.5);
  tisa::io::write_safetensors(init + "/model.safetensors", st);

  CmdResult r = run("glue --task STS-B --data-dir " + tmp + "/glue --init " + init + " --run-dir " + tmp +
                        "/run --set glue.steps=2 --set glue.eval_interval=1 --set glue.batch_size=4 "
                        "--set glue.lr=1e-30 --set glue.max_length=16",
                    tmp + "/nan.log");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_NE(r.output.find("every evaluation gave a non-finite"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(steps 1, 2)"), std::string::npos) << r.output;
  EXPECT_FALSE(stdfs::exists(tmp + "/run/STS-B/seed-12345/best"));
  EXPECT_FALSE(stdfs::exists(tmp + "/run/STS-B/results.json"));
  std::string seed_log;
  for (const auto& e : stdfs::directory_iterator(tmp + "/run/STS-B"))
    if (e.path().filename().string().rfind("seed-", 0) == 0) seed_log = tisa::test::slurp(e.path() / "train.log");
  EXPECT_NE(seed_log.find("every evaluation gave a non-finite"), std::string::npos) << seed_log;
}

}  // namespace

namespace {

using tisa::test::split_words;
using tisa::test::start_tisa_train;
using tisa::test::wait_exit;
using tisa::test::wait_for_checkpoint;

}  // namespace

TEST(GlueEndToEnd, InterruptAndResumeEndBitIdentical) {
  const std::string sample = tisa::test::source_dir() + "/data/sample/glue";
  ASSERT_TRUE(tisa::test::file_exists(sample + "/SST-2/train.tsv")) << sample;
  const std::string tmp = tisa::test::make_temp_dir("glue_resume");
  const std::string glue_dir = tmp + "/glue";
  copy_task(sample, glue_dir, "SST-2");
  const std::string init = tmp + "/init";
  write_tiny_albert(init, make_vocab(column(glue_dir + "/SST-2/train.tsv", 0, true), 3000));
  // Classifier dropout stays on: the resumed run must also restore the random generator.
  const std::string common = "glue --task SST-2 --data-dir " + glue_dir + " --init " + init +
                             " --seeds 1 --set glue.lr=1e-3 --set glue.batch_size=16 --set glue.steps=240"
                             " --set glue.warmup_steps=10 --set glue.max_length=64 --set glue.eval_interval=80"
                             " --set training.checkpoint_interval=5 --set training.keep_checkpoints=2"
                             " --set training.threads=1 --set training.log_interval=10";
  CmdResult full = run(common + " --run-dir " + tmp + "/full", tmp + "/full.log");
  ASSERT_EQ(full.rc, 0) << full.output;
  const std::string seed = "/SST-2/seed-1";
  const std::string last = seed + "/checkpoints/step-000240";
  ASSERT_TRUE(tisa::test::file_exists(tmp + "/full" + last + "/weights.safetensors")) << full.output;

  for (int sig : {SIGTERM, SIGKILL}) {
    const std::string name = sig == SIGTERM ? "term" : "kill";
    const std::string dir = tmp + "/" + name;
    std::vector<std::string> args = split_words(common);
    args.insert(args.end(), {"--run-dir", dir});
    const pid_t pid = start_tisa_train(args, tmp + "/" + name + "1.log");
    ASSERT_TRUE(wait_for_checkpoint(dir + seed + "/checkpoints")) << tisa::fs::read_file(tmp + "/" + name + "1.log");
    ::kill(pid, sig);
    const int rc = wait_exit(pid);
    const std::string log1 = tisa::fs::read_file(tmp + "/" + name + "1.log");
    ASSERT_FALSE(tisa::test::file_exists(dir + seed + "/results.json")) << "the run ended before the signal\n" << log1;
    if (sig == SIGTERM) {
      EXPECT_EQ(rc, 130) << log1;  // as `pretrain`: a checkpoint saved, exit 130
      EXPECT_NE(log1.find("interrupted after step"), std::string::npos) << log1;
    } else {
      EXPECT_EQ(rc, 128 + SIGKILL) << log1;
    }
    CmdResult resumed = run(common + " --run-dir " + dir + " --resume", tmp + "/" + name + "2.log");
    ASSERT_EQ(resumed.rc, 0) << resumed.output;
    EXPECT_NE(resumed.output.find("resuming"), std::string::npos) << resumed.output;
    for (const std::string& file : {last + "/weights.safetensors", last + "/optimizer.safetensors",
                                   last + "/training_state.json", seed + "/best/model.safetensors"}) {
      const std::string a = tisa::test::slurp(tmp + "/full" + file), b = tisa::test::slurp(dir + file);
      EXPECT_FALSE(a.empty()) << file;
      EXPECT_TRUE(a == b) << name << ": " << file << " differs from the uninterrupted run's";
    }
    const json ra = read_json(tmp + "/full" + seed + "/results.json"), rb = read_json(dir + seed + "/results.json");
    EXPECT_EQ(ra["metrics"], rb["metrics"]) << name;
    EXPECT_EQ(ra["history"], rb["history"]) << name;
    EXPECT_EQ(ra["best_step"], rb["best_step"]) << name;
  }
}

// Issue 36: `glue --resume` keeps its word as pretraining does. A seed's recorded settings
// (glue.lr, glue.max_length, the --init model's identity ...) must match; a mismatch is refused
// naming the key and both values, before any data is tokenised again; intervals, threads and the
// model folder's path may change; the record is never rewritten. And "leaderboard files in" is
// printed only when some were written.
TEST(GlueEndToEnd, ResumeRefusesChangedSettingsAndKeepsTheRecord) {
  const std::string sample = tisa::test::source_dir() + "/data/sample/glue";
  ASSERT_TRUE(tisa::test::file_exists(sample + "/SST-2/train.tsv")) << sample;
  const std::string tmp = tisa::test::make_temp_dir("glue_resume_word");
  const std::string glue_dir = tmp + "/glue";
  copy_task(sample, glue_dir, "SST-2");
  const std::vector<std::string> vocab = make_vocab(column(glue_dir + "/SST-2/train.tsv", 0, true), 3000);
  write_tiny_albert(tmp + "/init", vocab);
  write_tiny_albert(tmp + "/other", vocab, /*seed=*/2);  // same shapes and tokenizer, other weights
  stdfs::copy(tmp + "/init", tmp + "/moved");           // the same model in another folder
  const std::string dir = tmp + "/run";
  const std::string settings = " --task SST-2 --data-dir " + glue_dir + " --seeds 1 --run-dir " + dir +
                               " --set glue.lr=5e-4 --set glue.batch_size=8 --set glue.steps=10"
                               " --set glue.max_length=48 --set training.checkpoint_interval=5"
                               " --set training.threads=1";
  CmdResult first = run("glue --init " + tmp + "/init" + settings, tmp + "/first.log");
  ASSERT_EQ(first.rc, 0) << first.output;
  const std::string seed = dir + "/SST-2/seed-1";
  const std::string record = tisa::fs::read_file(seed + "/config.yaml");
  EXPECT_NE(record.find("init_identity:"), std::string::npos) << record;
  stdfs::remove(seed + "/results.json");  // as if it had been stopped after its last checkpoint

  struct Probe {
    std::string args, says;
  };
  const std::vector<Probe> refused = {
      {"--init " + tmp + "/init" + settings + " --set glue.lr=1e-3", "glue.lr: the run has 0.0005, now 0.001"},
      {"--init " + tmp + "/init" + settings + " --set glue.max_length=64", "glue.max_length: the run has 48, now 64"},
      {"--init " + tmp + "/other" + settings, "glue.init_identity: the run has "},
  };
  for (const auto& p : refused) {
    CmdResult r = run("glue --resume " + p.args, tmp + "/refused.log");
    EXPECT_EQ(r.rc, 1) << p.args << "\n" << r.output;
    EXPECT_NE(r.output.find(p.says), std::string::npos) << p.says << "\n" << r.output;
    EXPECT_NE(r.output.find(seed + "/config.yaml"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("[data]"), std::string::npos) << "tokenised before the check\n" << r.output;
    EXPECT_EQ(tisa::fs::read_file(seed + "/config.yaml"), record) << p.args;
    EXPECT_FALSE(tisa::test::file_exists(seed + "/results.json")) << p.args;
  }
  // Allowed: the log interval, the threads and the model folder's path (same content).
  CmdResult ok = run("glue --resume --init " + tmp + "/moved" + settings +
                         " --set training.log_interval=3 --set training.threads=2",
                     tmp + "/ok.log");
  ASSERT_EQ(ok.rc, 0) << ok.output;
  EXPECT_NE(ok.output.find("resuming"), std::string::npos) << ok.output;
  EXPECT_TRUE(tisa::test::file_exists(seed + "/results.json"));
  EXPECT_EQ(tisa::fs::read_file(seed + "/config.yaml"), record) << "a resumed run rewrote its record";
  EXPECT_NE(ok.output.find("1 leaderboard file(s) in " + dir + "/leaderboard"), std::string::npos) << ok.output;

  // Issue 36, point 4: without a test split no leaderboard file is written, and the log says so.
  stdfs::remove(glue_dir + "/SST-2/test.tsv");
  CmdResult no_test = run("glue --init " + tmp + "/init --task SST-2 --data-dir " + glue_dir + " --run-dir " + tmp +
                              "/no_test --set glue.steps=2 --set glue.batch_size=8 --set training.threads=1",
                          tmp + "/no_test.log");
  ASSERT_EQ(no_test.rc, 0) << no_test.output;
  EXPECT_NE(no_test.output.find("no leaderboard files"), std::string::npos) << no_test.output;
  EXPECT_EQ(no_test.output.find("leaderboard file(s) in"), std::string::npos) << no_test.output;
  EXPECT_FALSE(stdfs::exists(tmp + "/no_test/leaderboard"));
}
