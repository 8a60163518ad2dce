// Every archived reproduction under docs/results/ (a folder holding ARCHIVE.md, written by
// scripts/archive_reproduction.sh) regenerates its report byte for byte with today's `tisa-train
// report`, and its page docs/results/<folder>.md carries that report unedited below the page's
// own header: the committed tables come from committed data (issue 31).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
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

// The README quotes figures of committed runs only as blocks opened by
// `<!-- quoted from docs/results/NAME.md -->` and closed by `<!-- end of quote -->`; every
// non-blank line of such a block must be a line of that page, so the README cannot state a
// number its page does not (issue 31, point 4).
TEST(ArchivedResults, ReadmeQuotesAreLinesOfTheirPage) {
  const std::string open = "<!-- quoted from ", close = "<!-- end of quote -->";
  std::istringstream readme(slurp(source_dir() + "/README.md"));
  std::string line, page_path;
  std::set<std::string> page_lines;
  int line_no = 0, quoted = 0;
  bool inside = false;
  while (std::getline(readme, line)) {
    ++line_no;
    if (!inside && line.rfind(open, 0) == 0) {
      const auto end = line.find(" -->");
      ASSERT_NE(end, std::string::npos) << "README.md:" << line_no << ": expected '" << open << "PATH -->'";
      page_path = line.substr(open.size(), end - open.size());
      ASSERT_TRUE(file_exists(source_dir() + "/" + page_path)) << "README.md:" << line_no << ": no page " << page_path;
      std::istringstream page(slurp(source_dir() + "/" + page_path));
      page_lines.clear();
      for (std::string l; std::getline(page, l);) page_lines.insert(l);
      inside = true;
    } else if (inside && line == close) {
      inside = false;
    } else if (inside && !line.empty()) {
      ++quoted;
      EXPECT_TRUE(page_lines.count(line)) << "README.md:" << line_no << " is not a line of " << page_path << ": " << line;
    }
  }
  EXPECT_FALSE(inside) << "README.md: a quote opened with '" << open << "' is never closed by '" << close << "'";
  if (quoted == 0) GTEST_SKIP() << "README.md quotes no committed page";
}
