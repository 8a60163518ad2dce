// `tisa-train plot` on synthetic metrics.jsonl files: reading (resume handling, non-numeric values,
// partial last line, errors naming file:line), panel choice and order, and a well-formed SVG with
// one series per run and the run names in the legend.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "common/error.h"
#include "common/fs.h"
#include "plot/run_plots.h"
#include "support/svg_check.h"
#include "support/test_paths.h"

using namespace tisa::plot;

namespace {
// Writes a run directory with train records every 10 steps and eval records every 50.
std::string make_run(const std::string& root, const std::string& name, double rate, bool resumed = false) {
  std::string dir = root + "/" + name;
  tisa::fs::create_directories(dir);
  std::ofstream out(dir + "/metrics.jsonl");
  auto write = [&](int from, int to) {
    for (int step = from; step <= to; step += 10) {
      double loss = 8 * std::exp(-rate * step) + 1;
      out << R"({"event":"train","step":)" << step << R"(,"time":)" << step * 0.1 << R"(,"loss":)" << loss
          << R"(,"mlm_loss":)" << loss - 0.7 << R"(,"sop_loss":0.7,"lr":)" << 1e-3 * std::min(1.0, step / 50.0)
          << R"(,"tokens_seen":)" << 1000 * step << R"(,"note":"text is ignored"})" << "\n";
      if (step % 50 == 0)
        out << R"({"event":"eval","step":)" << step << R"(,"time":)" << step * 0.1 << R"(,"mlm_loss":)" << loss
            << R"(,"mlm_accuracy":)" << 1 - loss / 9 << R"(,"sop_accuracy":0.5,"tau_gram":)" << 0.5 + step / 1000.0
            << R"(,"tau_heads_mean":0.4,"tau_heads":[0.3,0.5],"examples":640})" << "\n";
    }
  };
  if (resumed) {
    write(0, 120);   // crashed at 120, resumed from the checkpoint at 100
    write(100, 200);
  } else {
    write(0, 200);
  }
  return dir;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST(RunPlotsTest, ReadsSeriesAndResolvesResume) {
  auto root = tisa::test::make_temp_dir("runplots");
  auto run = read_run_metrics(make_run(root, "resumed", 0.02, true));
  EXPECT_EQ(run.name, "resumed");
  const auto& loss = run.series.at("train").at("loss");
  ASSERT_EQ(loss.size(), 21u) << "steps 0..200 once each after the resume";
  for (size_t i = 1; i < loss.size(); ++i) EXPECT_LT(loss[i - 1].first, loss[i].first);
  EXPECT_EQ(run.series.at("eval").at("tau_gram").size(), 5u);
  EXPECT_EQ(run.series.at("train").count("note"), 0u) << "strings are not plotted";
  EXPECT_EQ(run.series.at("eval").count("tau_heads"), 0u) << "arrays are not plotted";
  auto timed = read_run_metrics(root + "/resumed/metrics.jsonl", "time");
  EXPECT_NEAR(timed.series.at("train").at("loss").back().first, 20.0, 1e-9);
}

TEST(RunPlotsTest, PanelOrderPutsKnownKeysFirst) {
  auto root = tisa::test::make_temp_dir("runplots");
  std::vector<RunMetrics> runs{read_run_metrics(make_run(root, "a", 0.01))};
  auto order = panel_order(runs);
  ASSERT_EQ(order.size(), 11u);  // 9 known + tokens_seen + examples
  EXPECT_EQ(order[0], (std::pair<std::string, std::string>{"train", "loss"}));
  auto pos = [&](const std::string& e, const std::string& k) {
    return std::find(order.begin(), order.end(), std::pair<std::string, std::string>{e, k}) - order.begin();
  };
  EXPECT_LT(pos("eval", "mlm_accuracy"), pos("eval", "tau_gram"));
  EXPECT_LT(pos("eval", "tau_gram"), pos("train", "lr"));
}

TEST(RunPlotsTest, PlotsTwoRunsIntoWellFormedSvg) {
  auto root = tisa::test::make_temp_dir("runplots");
  PlotRunsOptions options;
  options.runs = {make_run(root, "albert-abs", 0.01), make_run(root, "albert-tisa", 0.03)};
  options.out = root + "/figs/curves.svg";
  size_t panels = plot_runs(options);
  // train: loss, mlm_loss, sop_loss, lr, tokens_seen; eval: mlm_loss, 2 accuracies, 2 τ — not the
  // eval's example count, which is drawn only when asked for.
  EXPECT_EQ(panels, 10u);
  std::string svg = tisa::fs::read_file(options.out);
  std::string why;
  EXPECT_TRUE(tisa::test::svg_well_formed(svg, &why)) << why;
  EXPECT_EQ(count(svg, ">albert-abs</text>"), 1u) << "one shared legend";
  EXPECT_EQ(count(svg, ">albert-tisa</text>"), 1u);
  EXPECT_EQ(count(svg, "<polyline"), panels * 2) << "one series per run and panel";
  EXPECT_NE(svg.find("eval: τ(P·Pᵀ)"), std::string::npos);

  options.keys = {"loss", "eval:tau_gram"};
  options.out = root + "/subset.svg";
  EXPECT_EQ(plot_runs(options), 2u);  // train:loss (no eval record has "loss") and eval:tau_gram
  options.keys = {"examples"};
  EXPECT_EQ(plot_runs(options), 1u) << "bookkeeping keys on request";
}

TEST(RunPlotsTest, SmoothsNoisyTrainCurvesOnly) {
  const std::vector<std::pair<double, double>> points = {{0, 4}, {1, 0}, {2, 4}};
  // EMA with weight 0.5: 4, 0.5·4 + 0.5·0 = 2, 0.5·2 + 0.5·4 = 3.
  EXPECT_EQ(curve_values("train", "loss", points, 0.5), (std::vector<double>{4, 2, 3}));
  EXPECT_EQ(curve_values("train", "loss", points, 0.0), (std::vector<double>{4, 0, 4}));
  // A running total or a schedule is drawn as logged (an average would lag behind it), as are evals.
  EXPECT_EQ(curve_values("train", "tokens_seen", points, 0.5), (std::vector<double>{4, 0, 4}));
  EXPECT_EQ(curve_values("train", "lr", points, 0.5), (std::vector<double>{4, 0, 4}));
  EXPECT_EQ(curve_values("eval", "mlm_loss", points, 0.5), (std::vector<double>{4, 0, 4}));
}

TEST(RunPlotsTest, ErrorsNameFileAndLine) {
  auto root = tisa::test::make_temp_dir("runplots");
  tisa::fs::create_directories(root + "/bad");
  {
    std::ofstream out(root + "/bad/metrics.jsonl");
    out << R"({"event":"train","step":1,"loss":2})" << "\n" << "{oops\n";
  }
  try {
    read_run_metrics(root + "/bad");
    FAIL() << "expected tisa::Error";
  } catch (const tisa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("metrics.jsonl:2"), std::string::npos) << e.what();
  }
  // An unterminated last line is a run still writing: skipped.
  tisa::fs::create_directories(root + "/live");
  {
    std::ofstream out(root + "/live/metrics.jsonl");
    out << R"({"event":"train","step":1,"loss":2})" << "\n" << R"({"event":"train","st)";
  }
  EXPECT_EQ(read_run_metrics(root + "/live").series.at("train").at("loss").size(), 1u);
  EXPECT_THROW(read_run_metrics(root + "/missing"), tisa::Error);
  PlotRunsOptions options;
  options.runs = {root + "/live"};
  options.out = root + "/x.png";
  EXPECT_THROW(plot_runs(options), tisa::Error) << "only SVG";
}
