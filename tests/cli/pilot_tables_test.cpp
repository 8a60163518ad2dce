// Pilot tables on the results pages (docs/results/*/tables.json): each folder's tables.md
// regenerates byte for byte from its committed validation records (scripts/results/pilot_tables.py,
// standard library only), and the page it names carries every table unedited, so a hand-copied
// number cannot drift from its data. The renderer refuses a record that lacks a step it is asked for.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/test_paths.h"

namespace {

namespace fs = std::filesystem;
using tisa::test::make_temp_dir;
using tisa::test::run;
using tisa::test::slurp;
using tisa::test::source_dir;

std::string renderer() { return "python3 " + source_dir() + "/scripts/results/pilot_tables.py "; }

bool have_python() { return run("python3 --version > /dev/null 2>&1") == 0; }

// The blocks of tables.md (tables separated by one blank line).
std::vector<std::string> tables_of(const std::string& text) {
  std::vector<std::string> tables;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find("\n\n", start);
    if (end == std::string::npos) end = text.size();
    else end += 1;
    tables.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return tables;
}

// The "page" value of a tables.json (a plain string; the renderer checks the file's shape).
std::string page_of(const std::string& spec) {
  const std::string key = "\"page\": \"";
  const size_t at = spec.find(key);
  if (at == std::string::npos) return "";
  const size_t end = spec.find('"', at + key.size());
  return spec.substr(at + key.size(), end - at - key.size());
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST(PilotTables, CommittedTablesRegenerateAndAreOnTheirPages) {
  if (!have_python()) GTEST_SKIP() << "python3 not found (the renderer needs it)";
  int folders = 0;
  for (const auto& entry : fs::directory_iterator(source_dir() + "/docs/results")) {
    const std::string dir = entry.path().string();
    if (!fs::exists(dir + "/tables.json")) continue;
    ++folders;
    const std::string out = make_temp_dir("pilot_tables");
    ASSERT_EQ(run(renderer() + dir + " --out " + out + "/tables.md > " + out + "/log.txt 2>&1"), 0)
        << slurp(out + "/log.txt");
    const std::string tables = slurp(out + "/tables.md");
    EXPECT_TRUE(tables == slurp(dir + "/tables.md"))
        << dir << "/tables.md differs from its regeneration: diff " << dir << "/tables.md " << out << "/tables.md";
    const std::string page_path = dir + "/" + page_of(slurp(dir + "/tables.json"));
    const std::string page = slurp(page_path);
    ASSERT_FALSE(page.empty()) << page_path << " (the page named in " << dir << "/tables.json) is empty or missing";
    for (const std::string& table : tables_of(tables))
      EXPECT_NE(page.find(table), std::string::npos) << page_path << " must carry this table of " << dir
                                                     << "/tables.md unedited:\n"
                                                     << table;
  }
  EXPECT_GT(folders, 0) << "no docs/results/*/tables.json found";
}

TEST(PilotTables, RefusesARecordWithoutARequestedStep) {
  if (!have_python()) GTEST_SKIP() << "python3 not found (the renderer needs it)";
  const std::string dir = make_temp_dir("pilot_tables_gap");
  write(dir + "/tables.json",
        R"({"page": "page.md", "tables": [{"header": "run", "steps": [500, 1000, 2000], "rows": [{"run": "a", "label": "a"}]}]})");
  // Evaluated at 500 and 1,500 but not 1,000: inside the run, so an error, not a stopped run's "—".
  write(dir + "/a.eval.jsonl",
        "{\"event\":\"eval\",\"step\":500,\"mlm_accuracy\":0.125}\n"
        "{\"event\":\"eval\",\"step\":1500,\"mlm_accuracy\":0.25}\n");
  EXPECT_EQ(run(renderer() + dir + " > " + dir + "/log.txt 2>&1"), 2);
  const std::string log = slurp(dir + "/log.txt");
  EXPECT_NE(log.find("a.eval.jsonl: no evaluation at step 1000"), std::string::npos) << log;

  // With 1,000 present the table renders; 2,000 lies after the last evaluation: "—".
  write(dir + "/a.eval.jsonl",
        "{\"event\":\"eval\",\"step\":500,\"mlm_accuracy\":0.125}\n"
        "{\"event\":\"eval\",\"step\":1000,\"mlm_accuracy\":0.25}\n");
  ASSERT_EQ(run(renderer() + dir + " > " + dir + "/log.txt 2>&1"), 0) << slurp(dir + "/log.txt");
  EXPECT_EQ(slurp(dir + "/tables.md"),
            "| run | 500 | 1,000 | 2,000 |\n"
            "|---|---:|---:|---:|\n"
            "| a | 12.5 | 25.0 | — |\n");
}
