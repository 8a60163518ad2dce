// GLUE TSV readers on the real files in shared/data/glue (exact row counts, label balance,
// spot-checked rows), MNLI and QQP on small files with the official headers, tolerated
// irregularities (BOM, CRLF, no final newline, blank lines), malformed rows with their messages,
// and the leaderboard writer.
#include <gtest/gtest.h>

#include <fstream>

#include "common/error.h"
#include "common/fs.h"
#include "data/glue_tsv.h"
#include "support/expect_error.h"
#include "support/test_paths.h"

namespace d = tisa::data;

namespace {

std::string glue_root() { return tisa::test::shared_path("data/glue"); }

std::string write(const std::string& dir, const std::string& name, const std::string& text) {
  std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

using tisa::test::error_of;

struct Count {
  const char* task;
  const char* split;
  size_t rows;
};

}  // namespace

TEST(GlueTsvTest, ExactRowCountsOnRealData) {
  TISA_REQUIRE_SHARED("data/glue/CoLA/train.tsv");
  const Count counts[] = {
      {"CoLA", "train", 8551}, {"CoLA", "dev", 1043},  {"CoLA", "test", 1063},  {"SST-2", "train", 67349},
      {"SST-2", "dev", 872},   {"SST-2", "test", 1821}, {"MRPC", "train", 3668}, {"MRPC", "dev", 408},
      {"MRPC", "test", 1725},  {"STS-B", "train", 5749}, {"STS-B", "dev", 1500}, {"STS-B", "test", 1379},
      {"RTE", "train", 2490},  {"RTE", "dev", 277},     {"RTE", "test", 3000},   {"WNLI", "train", 635},
      {"WNLI", "dev", 71},     {"WNLI", "test", 146},   {"QNLI", "dev", 5463},   {"QNLI", "test", 5463},
  };
  for (const Count& c : counts) {
    SCOPED_TRACE(std::string(c.task) + " " + c.split);
    d::GlueSplitData data = d::read_glue_task_split(glue_root(), c.task, c.split);
    EXPECT_EQ(data.examples.size(), c.rows);
    EXPECT_EQ(data.stats.examples, static_cast<int64_t>(c.rows));
    EXPECT_EQ(data.stats.skipped_short_rows, 0);
    EXPECT_EQ(data.stats.blank_lines, 0);
    const d::GlueSplitFormat& f = d::find_glue_task(c.task).split(c.split);
    for (const auto& ex : data.examples) {
      ASSERT_FALSE(ex.text_a.empty()) << "line " << ex.line;
      if (f.text_b >= 0) {
        ASSERT_FALSE(ex.text_b.empty()) << "line " << ex.line;
      }
      ASSERT_EQ(ex.has_label(), f.label >= 0) << "line " << ex.line;
    }
  }
}

TEST(GlueTsvTest, LabelBalanceAndSpotChecks) {
  TISA_REQUIRE_SHARED("data/glue/CoLA/train.tsv");
  auto cola = d::read_glue_task_split(glue_root(), "CoLA", "train");
  EXPECT_EQ(cola.stats.label_counts, (std::vector<int64_t>{2528, 6023}));
  EXPECT_EQ(cola.examples[0].text_a, "Our friends won't buy this analysis, let alone the next one we propose.");
  EXPECT_EQ(cola.examples[0].label, 1);
  EXPECT_EQ(cola.examples[0].line, 1);  // no header
  auto cola_dev = d::read_glue_task_split(glue_root(), "CoLA", "dev");  // last line without newline
  EXPECT_EQ(cola_dev.examples.back().line, 1043);

  auto sst = d::read_glue_task_split(glue_root(), "SST-2", "train");
  EXPECT_EQ(sst.stats.label_counts, (std::vector<int64_t>{29780, 37569}));
  EXPECT_EQ(sst.examples[0].text_a, "hide new secretions from the parental units ");  // kept verbatim
  EXPECT_EQ(sst.examples[0].line, 2);
  EXPECT_EQ(d::read_glue_task_split(glue_root(), "SST-2", "dev").stats.label_counts, (std::vector<int64_t>{428, 444}));

  auto mrpc = d::read_glue_task_split(glue_root(), "MRPC", "train");  // starts with a BOM
  EXPECT_EQ(mrpc.stats.label_counts, (std::vector<int64_t>{1194, 2474}));
  EXPECT_EQ(mrpc.examples[0].label, 1);
  EXPECT_EQ(mrpc.examples[0].text_a.substr(0, 30), "Amrozi accused his brother, wh");
  EXPECT_EQ(d::read_glue_task_split(glue_root(), "MRPC", "dev").stats.label_counts, (std::vector<int64_t>{129, 279}));

  auto rte = d::read_glue_task_split(glue_root(), "RTE", "train");
  EXPECT_EQ(rte.stats.label_counts, (std::vector<int64_t>{1249, 1241}));  // entailment, not_entailment
  EXPECT_EQ(rte.examples[0].label, 1);
  EXPECT_EQ(rte.examples[0].text_b, "Weapons of Mass Destruction Found in Iraq.");
  EXPECT_EQ(d::read_glue_task_split(glue_root(), "RTE", "dev").stats.label_counts, (std::vector<int64_t>{146, 131}));
  EXPECT_EQ(d::read_glue_task_split(glue_root(), "WNLI", "train").stats.label_counts,
            (std::vector<int64_t>{323, 312}));
  EXPECT_EQ(d::read_glue_task_split(glue_root(), "QNLI", "dev").stats.label_counts,
            (std::vector<int64_t>{2702, 2761}));

  auto sts = d::read_glue_task_split(glue_root(), "STS-B", "dev");
  EXPECT_EQ(sts.examples[0].score, 5.0);
  EXPECT_EQ(sts.examples[0].label, -1);
  EXPECT_EQ(sts.examples[0].text_a, "A man with a hard hat is dancing.");
  EXPECT_EQ(sts.examples[0].text_b, "A man wearing a hard hat is dancing.");
  double lo = 5, hi = 0;
  for (const auto& ex : sts.examples) lo = std::min(lo, ex.score), hi = std::max(hi, ex.score);
  EXPECT_EQ(lo, 0.0);
  EXPECT_EQ(hi, 5.0);
  EXPECT_TRUE(sts.stats.label_counts.empty());

  auto rte_test = d::read_glue_task_split(glue_root(), "RTE", "test");
  for (size_t i = 0; i < rte_test.examples.size(); ++i) ASSERT_EQ(rte_test.examples[i].index, static_cast<int64_t>(i));
  EXPECT_FALSE(rte_test.examples[0].has_label());
}

TEST(GlueTsvTest, TaskTable) {
  EXPECT_EQ(d::glue_tasks().size(), 10u);
  EXPECT_EQ(d::find_glue_task("sst2").name, "SST-2");
  EXPECT_EQ(d::find_glue_task("sts-b").name, "STS-B");
  EXPECT_EQ(d::find_glue_task("mnli").num_labels(), 3);
  EXPECT_EQ(d::find_glue_task("STS-B").num_labels(), 1);
  EXPECT_EQ(d::find_glue_task("ax").split("test").name, "diagnostic");
  EXPECT_EQ(d::glue_tsv_path("/g", "AX", "diagnostic"), "/g/diagnostic/diagnostic.tsv");
  EXPECT_EQ(d::glue_tsv_path("/g", "MNLI", "dev_mismatched"), "/g/MNLI/dev_mismatched.tsv");
  EXPECT_HAS(error_of([] { d::find_glue_task("SST"); }),
             "unknown GLUE task 'SST' (expected one of: CoLA, SST-2, MRPC, STS-B, QQP, MNLI, QNLI, RTE, WNLI, AX)");
  EXPECT_HAS(error_of([] { d::find_glue_task("MNLI").split("dev"); }),
             "GLUE task MNLI has no split 'dev' (expected one of: train, dev_matched, dev_mismatched, test_matched, "
             "test_mismatched)");
  const d::GlueTask& mnli = d::find_glue_task("MNLI");
  EXPECT_EQ(d::glue_label_index(mnli, "neutral", "x"), 2);
  EXPECT_EQ(d::glue_label_name(mnli, 0), "contradiction");
  EXPECT_EQ(d::glue_label_name(d::find_glue_task("QNLI"), 1), "not_entailment");
  EXPECT_HAS(error_of([&] { d::glue_label_name(mnli, 3); }), "class index 3 out of range [0, 3)");
}

TEST(GlueTsvTest, MnliOfficialColumns) {
  auto dir = tisa::test::make_temp_dir("glue");
  write(dir, "train.tsv",
        "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\tsentence1_parse\t"
        "sentence2_parse\tsentence1\tsentence2\tlabel1\tgold_label\n"
        "0\t31193\t31193n\tgovernment\t( ( a ) )\t( b )\t(ROOT a)\t(ROOT b)\tConceptually cream skimming has two "
        "basic dimensions.\tProduct and geography are what make cream skimming work. \tneutral\tneutral\n"
        "1\t101457\t101457e\ttelephone\tx\ty\tx\ty\tyou know \"quoted\tit is\tentailment\tentailment\n");
  auto train = d::read_glue_tsv(d::find_glue_task("MNLI"), "train", dir + "/train.tsv");
  ASSERT_EQ(train.examples.size(), 2u);
  EXPECT_EQ(train.examples[0].text_a, "Conceptually cream skimming has two basic dimensions.");
  EXPECT_EQ(train.examples[0].text_b, "Product and geography are what make cream skimming work. ");
  EXPECT_EQ(train.examples[0].label, 2);
  EXPECT_EQ(train.examples[1].text_a, "you know \"quoted");  // no quoting
  EXPECT_EQ(train.examples[1].label, 1);
  EXPECT_EQ(train.stats.label_counts, (std::vector<int64_t>{0, 1, 1}));

  const std::string dev_header =
      "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\tsentence1_parse\t"
      "sentence2_parse\tsentence1\tsentence2\tlabel1\tlabel2\tlabel3\tlabel4\tlabel5\tgold_label\r\n";
  write(dir, "dev_matched.tsv",
        dev_header + "0\t1\t1n\tfiction\tp\tq\tp\tq\tThe new rights are nice.\tEveryone loves them.\tneutral\t"
                     "entailment\tneutral\tneutral\tneutral\tneutral\r\n"
                     "1\t2\t2c\tfiction\tp\tq\tp\tq\tA\tB\tcontradiction\tcontradiction\tcontradiction\t"
                     "contradiction\tcontradiction\tcontradiction");  // CRLF, no final newline
  auto dev = d::read_glue_tsv(d::find_glue_task("MNLI"), "dev_matched", dir + "/dev_matched.tsv");
  ASSERT_EQ(dev.examples.size(), 2u);
  EXPECT_EQ(dev.examples[0].label, 2);
  EXPECT_EQ(dev.examples[1].label, 0);
  EXPECT_EQ(dev.examples[1].text_b, "B");  // no '\r' left
  EXPECT_EQ(dev.examples[0].text_b, "Everyone loves them.");

  write(dir, "test_mismatched.tsv",
        "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\tsentence1_parse\t"
        "sentence2_parse\tsentence1\tsentence2\n"
        "0\t1\t1\tletters\tp\tq\tp\tq\tHello there.\tGeneral Kenobi.\n"
        "7\t1\t1\tletters\tp\tq\tp\tq\tA\tB\n");
  auto test = d::read_glue_tsv(d::find_glue_task("MNLI"), "test_mismatched", dir + "/test_mismatched.tsv");
  ASSERT_EQ(test.examples.size(), 2u);
  EXPECT_EQ(test.examples[1].index, 7);
  EXPECT_EQ(test.examples[0].text_b, "General Kenobi.");
  EXPECT_FALSE(test.examples[0].has_label());

  // A dev file read as train (16 vs 12 columns) names the problem.
  EXPECT_HAS(error_of([&] { d::read_glue_tsv(d::find_glue_task("MNLI"), "train", dir + "/dev_matched.tsv"); }),
             dir + "/dev_matched.tsv:1: MNLI train: expected a header with 12 tab-separated columns, got 16");
  // Unknown label.
  write(dir, "bad.tsv", dev_header + "0\t1\t1n\tfiction\tp\tq\tp\tq\tA\tB\tneutral\tx\tx\tx\tx\t-\n");
  EXPECT_HAS(error_of([&] { d::read_glue_tsv(d::find_glue_task("MNLI"), "dev_matched", dir + "/bad.tsv"); }),
             dir + "/bad.tsv:2: MNLI dev_matched: column 16: unknown MNLI label '-' (expected one of: contradiction, "
                   "entailment, neutral)");
}

TEST(GlueTsvTest, QqpShortRowsSkippedAndCounted) {
  auto dir = tisa::test::make_temp_dir("glue");
  write(dir, "train.tsv",
        "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
        "133273\t213221\t213222\tHow is the life of a math student?\tWhich level of prepration is enough?\t0\n"
        "402555\t536040\t536041\tHow do I control my horny emotions?\n"  // short row (official file has such)
        "360472\t364011\t490273\tWhat causes stool color to change?\tWhat can cause stool to come out as black?\t1\n"
        "\n"
        "1\t2\n");
  auto train = d::read_glue_tsv(d::find_glue_task("QQP"), "train", dir + "/train.tsv");
  ASSERT_EQ(train.examples.size(), 2u);
  EXPECT_EQ(train.stats.skipped_short_rows, 2);
  EXPECT_EQ(train.stats.skipped_lines, (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(train.stats.blank_lines, 1);
  EXPECT_EQ(train.stats.label_counts, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(train.examples[1].text_b, "What can cause stool to come out as black?");
  EXPECT_EQ(train.examples[1].index, 1);  // data row number
  EXPECT_EQ(train.examples[1].line, 4);

  // Too many columns is still an error, and a short test row too (the leaderboard needs every id).
  write(dir, "long.tsv", "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n1\t2\t3\ta\tb\t0\textra\n");
  EXPECT_HAS(error_of([&] { d::read_glue_tsv(d::find_glue_task("QQP"), "dev", dir + "/long.tsv"); }),
             dir + "/long.tsv:2: QQP dev: expected 6 tab-separated columns, got 7");
  write(dir, "test.tsv", "id\tquestion1\tquestion2\n0\tWhy?\tWhy not?\n1\tonly one\n");
  EXPECT_HAS(error_of([&] { d::read_glue_tsv(d::find_glue_task("QQP"), "test", dir + "/test.tsv"); }),
             dir + "/test.tsv:3: QQP test: expected 3 tab-separated columns, got 2");
}

TEST(GlueTsvTest, MalformedRows) {
  auto dir = tisa::test::make_temp_dir("glue");
  const d::GlueTask& cola = d::find_glue_task("CoLA");
  write(dir, "cola.tsv", "gj04\t1\t\tGood.\ngj04\t0\t*\tBad sentence with\ttab.\n");
  EXPECT_HAS(error_of([&] { d::read_glue_tsv(cola, "train", dir + "/cola.tsv"); }),
             dir + "/cola.tsv:2: CoLA train: expected 4 tab-separated columns, got 5");
  write(dir, "cola2.tsv", "gj04\t1\t\tGood.\ngj04\tyes\t*\tBad.\n");
  EXPECT_HAS(error_of([&] { d::read_glue_tsv(cola, "dev", dir + "/cola2.tsv"); }),
             dir + "/cola2.tsv:2: CoLA dev: column 2: unknown CoLA label 'yes' (expected one of: 0, 1)");
  const d::GlueTask& sts = d::find_glue_task("STS-B");
  const std::string sts_header =
      "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore\n";
  write(dir, "sts.tsv", sts_header + "0\tg\tf\t2012\t0\tnone\tnone\tA\tB\t3.2x\n");
  EXPECT_HAS(error_of([&] { d::read_glue_tsv(sts, "train", dir + "/sts.tsv"); }),
             dir + "/sts.tsv:2: STS-B train: bad score '3.2x' in column 10 (expected a number from 0 to 5)");
  write(dir, "sts2.tsv", sts_header + "0\tg\tf\t2012\t0\tnone\tnone\tA\tB\t5.5\n");
  EXPECT_HAS(error_of([&] { d::read_glue_tsv(sts, "dev", dir + "/sts2.tsv"); }), "bad score '5.5'");
  write(dir, "rte_test.tsv", "index\tsentence1\tsentence2\nabc\tA\tB\n");
  EXPECT_HAS(error_of([&] { d::read_glue_tsv(d::find_glue_task("RTE"), "test", dir + "/rte_test.tsv"); }),
             dir + "/rte_test.tsv:2: RTE test: bad id 'abc' in column 1 (expected an integer)");
  write(dir, "empty.tsv", "");
  EXPECT_HAS(error_of([&] { d::read_glue_tsv(d::find_glue_task("RTE"), "train", dir + "/empty.tsv"); }),
             "empty file (expected a header line)");
  EXPECT_HAS(error_of([&] { d::read_glue_tsv(cola, "train", dir + "/missing.tsv"); }), dir + "/missing.tsv");
}

TEST(GlueTsvTest, BomAndCrlfTolerated) {
  auto dir = tisa::test::make_temp_dir("glue");
  write(dir, "dev.tsv",
        "\xEF\xBB\xBFQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\r\n1\t1\t2\tA \"b\t\"C\r\n0\t3\t4\tD\tE\r\n\r\n");
  auto data = d::read_glue_tsv(d::find_glue_task("MRPC"), "dev", dir + "/dev.tsv");
  ASSERT_EQ(data.examples.size(), 2u);
  EXPECT_EQ(data.examples[0].text_a, "A \"b");
  EXPECT_EQ(data.examples[0].text_b, "\"C");
  EXPECT_EQ(data.examples[1].text_b, "E");
  EXPECT_EQ(data.examples[1].label, 0);
}

TEST(GlueTsvTest, LeaderboardFiles) {
  auto dir = tisa::test::make_temp_dir("glue");
  EXPECT_EQ(d::leaderboard_file_name("MNLI", "test_matched"), "MNLI-m.tsv");
  EXPECT_EQ(d::leaderboard_file_name("MNLI", "test_mismatched"), "MNLI-mm.tsv");
  EXPECT_EQ(d::leaderboard_file_name("AX", "diagnostic"), "AX.tsv");
  EXPECT_EQ(d::leaderboard_file_name("sst2", "test"), "SST-2.tsv");
  std::vector<std::string> names;
  for (const auto& t : d::glue_tasks())
    for (const auto& s : t.splits)
      if (!s.leaderboard.empty()) names.push_back(s.leaderboard);
  EXPECT_EQ(names, (std::vector<std::string>{"CoLA.tsv", "SST-2.tsv", "MRPC.tsv", "STS-B.tsv", "QQP.tsv", "MNLI-m.tsv",
                                             "MNLI-mm.tsv", "QNLI.tsv", "RTE.tsv", "WNLI.tsv", "AX.tsv"}));

  std::string path = dir + "/RTE.tsv";
  d::write_leaderboard_file("RTE", "test", {0, 1, 2}, {1, 0, 1}, path);
  EXPECT_EQ(tisa::fs::read_file(path), "index\tprediction\n0\tnot_entailment\n1\tentailment\n2\tnot_entailment\n");
  d::write_leaderboard_file("MNLI", "test_mismatched", {5, 9}, {2, 0}, dir + "/MNLI-mm.tsv");
  EXPECT_EQ(tisa::fs::read_file(dir + "/MNLI-mm.tsv"), "index\tprediction\n5\tneutral\n9\tcontradiction\n");
  d::write_leaderboard_file("CoLA", "test", {0, 1}, {1, 0}, dir + "/CoLA.tsv");
  EXPECT_EQ(tisa::fs::read_file(dir + "/CoLA.tsv"), "index\tprediction\n0\t1\n1\t0\n");
  d::write_leaderboard_file("STS-B", "test", {0, 1, 2, 3, 4}, {-0.2, 2.34567, 5.7, -0.0, 3.0006}, dir + "/STS-B.tsv");
  EXPECT_EQ(tisa::fs::read_file(dir + "/STS-B.tsv"),
            "index\tprediction\n0\t0.000\n1\t2.346\n2\t5.000\n3\t0.000\n4\t3.001\n");

  EXPECT_HAS(error_of([&] { d::write_leaderboard_file("RTE", "test", {0}, {2}, path); }),
             "is not a class index of RTE [0, 2)");
  EXPECT_HAS(error_of([&] { d::write_leaderboard_file("RTE", "test", {0, 1}, {1}, path); }),
             "2 indices but 1 predictions");
  EXPECT_HAS(error_of([&] { d::write_leaderboard_file("RTE", "dev", {0}, {1}, path); }), "is a labelled split");
  EXPECT_HAS(error_of([&] { d::write_leaderboard_file("STS-B", "test", {0}, {std::nan("")}, path); }), "is NaN");
}

TEST(GlueTsvTest, RoundTripLeaderboardOfRealTestFile) {
  TISA_REQUIRE_SHARED("data/glue/WNLI/test.tsv");
  auto test = d::read_glue_task_split(glue_root(), "WNLI", "test");
  std::vector<int64_t> indices;
  std::vector<double> preds;
  for (const auto& ex : test.examples) {
    indices.push_back(ex.index);
    preds.push_back(static_cast<double>(ex.index % 2));
  }
  auto dir = tisa::test::make_temp_dir("glue");
  const std::string path = dir + "/" + d::leaderboard_file_name("WNLI", "test");
  d::write_leaderboard_file("WNLI", "test", indices, preds, path);
  std::string text = tisa::fs::read_file(path);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 147);
  EXPECT_EQ(text.substr(0, 29), "index\tprediction\n0\t0\n1\t1\n2\t0\n");
}

// Issue 18, class 6: a file without its header must not silently lose its first row, and a
// header-only split must fail when read (before any training), not after.
TEST(GlueTsvTest, HeaderlessAndEmptySplitsAreErrors) {
  auto dir = tisa::test::make_temp_dir("glue");
  const d::GlueTask& sst = d::find_glue_task("SST-2");
  write(dir, "noheader.tsv", "a fine film\t1\na dull film\t0\n");
  EXPECT_HAS(error_of([&] { d::read_glue_tsv(sst, "dev", dir + "/noheader.tsv"); }),
             dir + "/noheader.tsv:1: SST-2 dev: column 1 of the header is 'a fine film', expected 'sentence'");
  write(dir, "rte.tsv", "0\tA\tB\tentailment\n1\tC\tD\tnot_entailment\n");
  EXPECT_HAS(error_of([&] { d::read_glue_tsv(d::find_glue_task("RTE"), "train", dir + "/rte.tsv"); }),
             "column 1 of the header is '0', expected 'index'");
  write(dir, "header_only.tsv", "sentence\tlabel\n");
  EXPECT_HAS(error_of([&] { d::read_glue_tsv(sst, "dev", dir + "/header_only.tsv"); }),
             dir + "/header_only.tsv: SST-2 dev: no examples after the header");
  write(dir, "blank.tsv", "sentence\tlabel\n\n\n");
  EXPECT_HAS(error_of([&] { d::read_glue_tsv(sst, "train", dir + "/blank.tsv"); }), "no examples");
  // Every headed split of the table knows its column names, one per column.
  for (const auto& t : d::glue_tasks())
    for (const auto& s : t.splits)
      EXPECT_EQ(s.header ? static_cast<size_t>(s.columns) : 0u, s.header_names.size()) << t.name << " " << s.name;
}
