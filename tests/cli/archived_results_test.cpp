// Every archived reproduction under docs/results/ (a folder holding ARCHIVE.md, written by
// scripts/archive_reproduction.sh) regenerates its report byte for byte with today's `tisa-train
// report`, and its page docs/results/<folder>.md carries that report unedited below the page's
// own header: the committed tables come from committed data (issue 31).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/test_paths.h"

namespace {

using tisa::test::bin_dir;
using tisa::test::file_exists;
using tisa::test::make_temp_dir;
using tisa::test::run;
using tisa::test::slurp;
using tisa::test::source_dir;
namespace stdfs = std::filesystem;

std::vector<std::string> archived_reproductions() {
  std::vector<std::string> names;
  for (const auto& e : stdfs::directory_iterator(source_dir() + "/docs/results"))
    if (e.is_directory() && file_exists((e.path() / "ARCHIVE.md").string())) names.push_back(e.path().filename().string());
  return names;
}

}  // namespace

TEST(ArchivedResults, RegenerateByteForByteAndAreThePage) {
  const auto names = archived_reproductions();
  if (names.empty()) GTEST_SKIP() << "no archived reproduction under docs/results/";
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    const std::string archive = source_dir() + "/docs/results/" + name, out = make_temp_dir("archived_" + name);
    const std::string cmd = bin_dir() + "/tisa-train report --dir " + archive + " --settings-from " + archive +
                            "/results.json --out " + out + "/results.md --json " + out + "/results.json --figure " +
                            out + "/glue_differences.svg --pretraining-figure " + out + "/pretraining.svg > " + out +
                            "/log.txt 2>&1";
    ASSERT_EQ(run(cmd), 0) << slurp(out + "/log.txt");
    for (const char* f : {"results.md", "results.json", "glue_differences.svg", "pretraining.svg"}) {
      if (!file_exists(archive + "/" + f)) continue;  // e.g. no comparisons, so no figure
      EXPECT_TRUE(slurp(out + "/" + f) == slurp(archive + "/" + f))
          << f << " differs from its regeneration: diff " << archive << "/" << f << " " << out << "/" << f;
    }
    const std::string page = source_dir() + "/docs/results/" + name + ".md";
    ASSERT_TRUE(file_exists(page)) << page;
    const std::string md = slurp(archive + "/results.md"), text = slurp(page);
    ASSERT_GE(text.size(), md.size());
    EXPECT_EQ(text.substr(text.size() - md.size()), md) << page << " must end with " << archive << "/results.md, unedited";
  }
}

// --settings-from names the file and the key it could not use (e.g. a results.json written
// before `report` recorded its resample count).
TEST(ArchivedResults, SettingsFromNamesTheMissingKey) {
  const std::string dir = make_temp_dir("settings_from");
  stdfs::create_directories(dir + "/pretrain");
  std::ofstream(dir + "/old.json") << R"({"variants": [{"name": "absolute"}], "reference": "absolute", "meta": {}})";
  ASSERT_NE(run(bin_dir() + "/tisa-train report --dir " + dir + " --settings-from " + dir + "/old.json > " + dir +
                "/log.txt 2>&1"),
            0);
  const std::string log = slurp(dir + "/log.txt");
  EXPECT_NE(log.find(dir + "/old.json: key 'resamples' must be an integer"), std::string::npos) << log;
  // It replaces the options it would set: giving both is refused.
  EXPECT_NE(run(bin_dir() + "/tisa-train report --dir " + dir + " --settings-from " + dir + "/old.json --resamples 500 > " +
                dir + "/log2.txt 2>&1"),
            0);
  EXPECT_NE(slurp(dir + "/log2.txt").find("excludes"), std::string::npos) << slurp(dir + "/log2.txt");
}
