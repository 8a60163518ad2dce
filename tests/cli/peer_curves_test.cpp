// The recipe-scale peer of issue 31 (docs/results/peer-recipe-absolute/): tisa-train and Hugging
// Face trained the `cpu` recipe on the same batches. Its table and curves regenerate byte for byte
// from the committed per-update logs and evaluations (scripts/peer/peer_curves.py render, standard
// library only), its figure from those curves with `tisa-train plot`, and absolute-plateau.md
// carries the table unedited: the page states no number its data does not.
#include <gtest/gtest.h>

#include <string>

#include "support/test_paths.h"

namespace {

using tisa::test::bin_dir;
using tisa::test::file_exists;
using tisa::test::make_temp_dir;
using tisa::test::run;
using tisa::test::slurp;
using tisa::test::source_dir;

const char* const kFolder = "/docs/results/peer-recipe-absolute";
// The figure's command, as docs/results/absolute-plateau.md §8 gives it.
const char* const kPlotArgs =
    " --keys train:mlm_loss eval:mlm_accuracy eval:sop_accuracy --title 'absolute, cpu recipe: tisa-train and HF'";

}  // namespace

TEST(PeerCurves, CommittedTableAndCurvesRegenerateAndAreOnThePage) {
  const std::string dir = source_dir() + kFolder;
  if (!file_exists(dir + "/eval.jsonl")) GTEST_SKIP() << "no " << dir;
  if (run("python3 --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "python3 not found (the renderer needs it)";
  const std::string out = make_temp_dir("peer_curves");
  ASSERT_EQ(run("python3 " + source_dir() + "/scripts/peer/peer_curves.py render " + dir + " --out-dir " + out + " > " +
                out + "/log.txt 2>&1"),
            0)
      << slurp(out + "/log.txt");
  for (const char* f : {"curves.md", "tisa-train/metrics.jsonl", "hf-transformers/metrics.jsonl"})
    EXPECT_TRUE(slurp(out + "/" + f) == slurp(dir + "/" + f))
        << f << " differs from its regeneration: diff " << dir << "/" << f << " " << out << "/" << f;
  ASSERT_EQ(run("cd " + out + " && " + bin_dir() + "/tisa-train plot --runs tisa-train hf-transformers --out curves.svg" +
                kPlotArgs + " > plot.txt 2>&1"),
            0)
      << slurp(out + "/plot.txt");
  EXPECT_TRUE(slurp(out + "/curves.svg") == slurp(dir + "/curves.svg"))
      << "curves.svg differs from its regeneration: diff " << dir << "/curves.svg " << out << "/curves.svg";
  const std::string page = slurp(source_dir() + "/docs/results/absolute-plateau.md");
  EXPECT_NE(page.find(slurp(dir + "/curves.md")), std::string::npos)
      << "docs/results/absolute-plateau.md must carry " << dir << "/curves.md unedited";
}
