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

// Issue 18, class 8: corpora and GLUE files must be UTF-8 text. A binary file or an invalid byte
// is an error naming the file, line and column, not text silently turned into <unk>.
TEST(FsTest, Utf8TextFilesAreChecked) {
  auto dir = tisa::test::make_temp_dir("fs");
  auto write = [&](const std::string& name, const std::string& bytes) {
    tisa::fs::write_file_atomic(dir + "/" + name, bytes);
    return dir + "/" + name;
  };
  const std::string ok = write("ok.txt", "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\nline two\n");
  EXPECT_EQ(tisa::fs::read_utf8_text_file(ok), tisa::fs::read_file(ok));
  auto error = [](const std::string& path) {
    try {
      tisa::fs::read_utf8_text_file(path);
    } catch (const tisa::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string latin1 = write("latin1.txt", "first line\nna\xEFve\n");
  EXPECT_NE(error(latin1).find(latin1 + ":2:3: invalid UTF-8 (byte 0xEF)"), std::string::npos) << error(latin1);
  const std::string binary = write("data.bin", std::string("\x7F" "ELF\x02\x01\x00\x00", 8));
  EXPECT_NE(error(binary).find(binary + " looks like a binary file (a NUL byte at offset 6)"), std::string::npos)
      << error(binary);
  for (const char* bad : {"\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82"})  // overlong, surrogate, > U+10FFFF, cut
    EXPECT_NE(error(write("bad.txt", std::string("x") + bad)).find("invalid UTF-8"), std::string::npos) << bad;
}
