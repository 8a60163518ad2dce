#include <gtest/gtest.h>

#include <filesystem>

#include "common/error.h"
#include "common/fs.h"
#include "support/test_paths.h"

TEST(FsTest, AtomicWriteReplacesWholeFileAndLeavesNoTemp) {
  auto dir = tisa::test::make_temp_dir("fs");
  auto path = dir + "/state.json";
  tisa::fs::write_file_atomic(path, "first");
  tisa::fs::write_file_atomic(path, "second version");
  EXPECT_EQ(tisa::fs::read_file(path), "second version");
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) { (void)e; ++files; }
  EXPECT_EQ(files, 1) << "a temporary file was left behind";
}

TEST(FsTest, ReadMissingFileNamesIt) {
  try {
    tisa::fs::read_file("/nonexistent/dir/file.txt");
    FAIL() << "expected tisa::Error";
  } catch (const tisa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/file.txt"), std::string::npos);
  }
}

TEST(FsTest, Fnv1aKnownValue) {
  // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (published test vector).
  EXPECT_EQ(tisa::fs::fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
}
