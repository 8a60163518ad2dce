// Streaming corpus input of `prepare pretrain`: which files the --input values name (files,
// folders, globs) and their text line by line, decompressed (gzip, zstd: by magic bytes) and
// checked to be UTF-8 as it streams by, so that a corpus of any size is read in bounded memory.
// Torch-free, tokenizer-free.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tisa::prep {

// Expands --input values, in the order given: a file stays itself; a folder gives every regular
// file below it (recursive, sorted by path, names starting with '.' skipped); a value holding
// * ? or [ is a glob (sorted). Throws tisa::Error naming the value when it names nothing, and
// when one file would be read twice.
std::vector<std::string> expand_inputs(const std::vector<std::string>& values);

enum class Compression { kNone, kGzip, kZstd };
const char* compression_name(Compression compression);
// From the file's first bytes (1F 8B: gzip, 28 B5 2F FD: zstd), whatever its name.
Compression detect_compression(const std::string& path);

// A file's text as lines: a leading UTF-8 BOM dropped, CRLF and lone CR read as LF, every byte
// checked to be well-formed UTF-8 (the error names file:line:column) and free of NUL (binary).
class LineReader {
 public:
  explicit LineReader(const std::string& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line, without its line end; false at the end of the file.
  bool next(std::string& line);
  int64_t line_number() const;  // of the line last returned, 1-based
  int64_t bytes_read() const;   // text bytes (decompressed) consumed so far
  int64_t file_offset() const;  // bytes of the file itself (compressed) consumed so far
  Compression compression() const;
  const std::string& path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tisa::prep
