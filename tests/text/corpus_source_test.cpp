// prep::expand_inputs and prep::LineReader: folders and globs, line ends, BOM, UTF-8 errors
// naming file:line:column, and gzip / zstd input read as it streams (written here with zlib and
// libzstd, so the test needs no tools).
#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "prep/corpus_reader.h"
#include "prep/corpus_source.h"
#include "support/expect_error.h"
#include "support/test_paths.h"

using namespace tisa;
using namespace tisa::prep;

namespace {

template <class F>
void expect_error_mentions(F&& fn, std::initializer_list<std::string> needles) {
  const std::string message = test::error_of(fn);
  for (const auto& n : needles) EXPECT_HAS(message, n);
}

void write(const std::string& path, const std::string& data) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << data;
}

void write_gzip(const std::string& path, const std::string& data) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, data.data(), static_cast<unsigned>(data.size())), static_cast<int>(data.size()));
  gzclose(f);
}

void write_zstd(const std::string& path, const std::string& data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  const size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3);
  ASSERT_FALSE(ZSTD_isError(n));
  out.resize(n);
  write(path, out);
}

std::vector<std::string> lines_of(const std::string& path) {
  LineReader r(path);
  std::vector<std::string> out;
  for (std::string l; r.next(l);) out.push_back(l);
  return out;
}

}  // namespace

TEST(CorpusSource, FoldersAndGlobsExpandSortedAndDuplicatesAreRefused) {
  const auto dir = test::make_temp_dir("src_expand");
  write(dir + "/b/2.txt", "x");
  write(dir + "/b/1.txt", "x");
  write(dir + "/b/.hidden", "x");
  write(dir + "/a.txt", "x");
  write(dir + "/c.jsonl", "x");
  EXPECT_EQ(expand_inputs({dir + "/b"}), (std::vector<std::string>{dir + "/b/1.txt", dir + "/b/2.txt"}));
  EXPECT_EQ(expand_inputs({dir + "/*.txt", dir + "/c.jsonl"}), (std::vector<std::string>{dir + "/a.txt", dir + "/c.jsonl"}));
  expect_error_mentions([&] { expand_inputs({dir + "/a.txt", dir + "/*.txt"}); }, {"a.txt", "twice"});
  expect_error_mentions([&] { expand_inputs({dir + "/*.xml"}); }, {"*.xml", "matches no file"});
  expect_error_mentions([&] { expand_inputs({dir + "/missing.txt"}); }, {"missing.txt", "no such file"});
}

TEST(CorpusSource, LineEndsBomAndLastLineWithoutNewline) {
  const auto dir = test::make_temp_dir("src_lines");
  write(dir + "/t.txt", "\xEF\xBB\xBFone\r\ntwo\rthree\n\nfour");
  EXPECT_EQ(lines_of(dir + "/t.txt"), (std::vector<std::string>{"one", "two", "three", "", "four"}));
  write(dir + "/e.txt", "");
  EXPECT_TRUE(lines_of(dir + "/e.txt").empty());
}

TEST(CorpusSource, InvalidUtf8AndBinaryNameFileLineAndColumn) {
  const auto dir = test::make_temp_dir("src_utf8");
  write(dir + "/bad.txt", "fine\nalso fine\nab\xFF" "cd\n");
  expect_error_mentions([&] { lines_of(dir + "/bad.txt"); }, {"bad.txt:3:3", "invalid UTF-8", "0xFF"});
  write(dir + "/bin.dat", std::string("ab\0cd", 5));
  expect_error_mentions([&] { lines_of(dir + "/bin.dat"); }, {"bin.dat:1", "binary"});
}

TEST(CorpusSource, GzipAndZstdReadLikeThePlainFile) {
  const auto dir = test::make_temp_dir("src_z");
  std::string text;
  for (int i = 0; i < 200000; ++i) text += "Line " + std::to_string(i) + " of the corpus.\r\n";  // > 1 MiB buffer
  write(dir + "/plain.txt", text);
  write_gzip(dir + "/a.txt.gz", text);
  write_zstd(dir + "/a.zst", text);
  write_gzip(dir + "/named-plain.txt", text);  // detected by content, not by name
  EXPECT_EQ(detect_compression(dir + "/a.txt.gz"), Compression::kGzip);
  EXPECT_EQ(detect_compression(dir + "/a.zst"), Compression::kZstd);
  EXPECT_EQ(detect_compression(dir + "/named-plain.txt"), Compression::kGzip);
  const auto plain = lines_of(dir + "/plain.txt");
  ASSERT_EQ(plain.size(), 200000u);
  EXPECT_EQ(lines_of(dir + "/a.txt.gz"), plain);
  EXPECT_EQ(lines_of(dir + "/a.zst"), plain);
  EXPECT_EQ(lines_of(dir + "/named-plain.txt"), plain);
  LineReader r(dir + "/a.zst");
  for (std::string l; r.next(l);) {
  }
  EXPECT_EQ(r.bytes_read(), static_cast<int64_t>(text.size()));
}

TEST(CorpusSource, TruncatedCompressedFilesAreErrors) {
  const auto dir = test::make_temp_dir("src_trunc");
  std::string text;
  for (int i = 0; i < 50000; ++i) text += "Line " + std::to_string(i) + ".\n";
  write_zstd(dir + "/a.zst", text);
  write_gzip(dir + "/a.gz", text);
  for (const char* name : {"/a.zst", "/a.gz"}) {
    std::string bytes;
    {
      std::ifstream in(dir + name, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    write(dir + name, bytes.substr(0, bytes.size() / 2));
    expect_error_mentions([&] { lines_of(dir + name); }, {std::string(name + 1), "truncated"});
  }
}

TEST(CorpusSource, JsonlGzipStreamsDocumentsWithReport) {
  const auto dir = test::make_temp_dir("src_jsonl");
  write_gzip(dir + "/c.jsonl.gz",
             "{\"id\": 1, \"text\": \"First doc. It has two sentences.\\nAnd a paragraph.\"}\n\n"
             "{\"id\": 2, \"text\": \"Second doc.\"}\n");
  std::vector<TextDocument> docs;
  const ReadReport r = read_corpus_file(dir + "/c.jsonl.gz", CorpusFormat::kAuto, {},
                                        [&](TextDocument&& d) { docs.push_back(std::move(d)); });
  EXPECT_EQ(r.format, CorpusFormat::kJsonl);
  EXPECT_EQ(r.compression, Compression::kGzip);
  EXPECT_EQ(docs, (std::vector<TextDocument>{{"First doc.", "It has two sentences.", "And a paragraph."}, {"Second doc."}}));
  EXPECT_EQ(r.text_bytes, r.kept_bytes);
  EXPECT_EQ(r.documents, 2);
}
