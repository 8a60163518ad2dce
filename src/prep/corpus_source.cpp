// Input expansion and the streaming, decompressing, UTF-8-checking line reader (corpus_source.h).
#include "prep/corpus_source.h"

#include <glob.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "common/error.h"
#include "common/fs.h"

namespace tisa::prep {
namespace stdfs = std::filesystem;

namespace {

bool is_glob(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

void add_folder(const std::string& folder, std::vector<std::string>& out) {
  std::vector<std::string> files;
  for (auto it = stdfs::recursive_directory_iterator(folder); it != stdfs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (!name.empty() && name[0] == '.') {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw Error("--input " + folder + ": the folder holds no files");
  out.insert(out.end(), files.begin(), files.end());
}

}  // namespace

std::vector<std::string> expand_inputs(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& v : values) {
    if (stdfs::is_directory(v)) {
      add_folder(v, out);
    } else if (stdfs::is_regular_file(v)) {
      out.push_back(v);
    } else if (is_glob(v)) {
      glob_t g{};
      const int rc = ::glob(v.c_str(), 0, nullptr, &g);
      std::vector<std::string> matches;
      if (rc == 0)
        for (size_t i = 0; i < g.gl_pathc; ++i) matches.emplace_back(g.gl_pathv[i]);
      ::globfree(&g);
      if (matches.empty()) throw Error("--input " + v + ": the pattern matches no file");
      std::sort(matches.begin(), matches.end());
      for (const auto& m : matches) {
        if (stdfs::is_directory(m)) add_folder(m, out);
        else out.push_back(m);
      }
    } else {
      throw Error("--input " + v + ": no such file or folder");
    }
  }
  std::set<std::string> seen;
  for (const auto& f : out)
    if (!seen.insert(stdfs::weakly_canonical(f).string()).second)
      throw Error("--input names " + f + " twice (directly, through a folder or a glob): it would be read twice");
  return out;
}

const char* compression_name(Compression c) {
  switch (c) {
    case Compression::kNone: return "none";
    case Compression::kGzip: return "gzip";
    case Compression::kZstd: return "zstd";
  }
  return "?";
}

Compression detect_compression(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error("cannot open " + path + ": " + std::strerror(errno));
  unsigned char m[4] = {};
  const size_t n = std::fread(m, 1, 4, f);
  std::fclose(f);
  if (n >= 2 && m[0] == 0x1F && m[1] == 0x8B) return Compression::kGzip;
  if (n >= 4 && m[0] == 0x28 && m[1] == 0xB5 && m[2] == 0x2F && m[3] == 0xFD) return Compression::kZstd;
  return Compression::kNone;
}

// ------------------------------------------------------------------------------ byte sources
namespace {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Up to n bytes into buf; 0 at the end. Throws on read or decompression errors.
  virtual size_t read(char* buf, size_t n) = 0;
  virtual int64_t offset() const = 0;  // file bytes consumed
};

class PlainSource : public ByteSource {
 public:
  explicit PlainSource(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "rb")) {
    if (!f_) throw Error("cannot open " + path + ": " + std::strerror(errno));
  }
  ~PlainSource() override { std::fclose(f_); }
  size_t read(char* buf, size_t n) override {
    const size_t got = std::fread(buf, 1, n, f_);
    if (got < n && std::ferror(f_)) throw Error("cannot read " + path_ + ": " + std::strerror(errno));
    return got;
  }
  int64_t offset() const override { return static_cast<int64_t>(std::ftell(f_)); }

 private:
  std::string path_;
  std::FILE* f_;
};

// zlib's gzread also reads files of several concatenated gzip members (what `cat a.gz b.gz` gives).
class GzipSource : public ByteSource {
 public:
  explicit GzipSource(const std::string& path) : path_(path), f_(::gzopen(path.c_str(), "rb")) {
    if (!f_) throw Error("cannot open " + path + ": " + std::strerror(errno));
    ::gzbuffer(f_, 1 << 20);
  }
  ~GzipSource() override { ::gzclose(f_); }
  size_t read(char* buf, size_t n) override {
    const int got = ::gzread(f_, buf, static_cast<unsigned>(n));
    int code = Z_OK;
    const char* msg = ::gzerror(f_, &code);
    // A truncated member ends reading with Z_BUF_ERROR ("unexpected end of file"), not with -1.
    if (got < 0 || (got == 0 && code != Z_OK))
      throw Error(path_ + ": gzip data is corrupt or truncated (" + std::string(msg ? msg : "?") + ")");
    return static_cast<size_t>(got);
  }
  int64_t offset() const override { return static_cast<int64_t>(::gzoffset(f_)); }

 private:
  std::string path_;
  gzFile f_;
};

class ZstdSource : public ByteSource {
 public:
  explicit ZstdSource(const std::string& path)
      : path_(path), f_(std::fopen(path.c_str(), "rb")), ctx_(ZSTD_createDStream()), in_buf_(ZSTD_DStreamInSize()) {
    if (!f_) throw Error("cannot open " + path + ": " + std::strerror(errno));
    ZSTD_initDStream(ctx_);
  }
  ~ZstdSource() override {
    ZSTD_freeDStream(ctx_);
    std::fclose(f_);
  }
  size_t read(char* buf, size_t n) override {
    ZSTD_outBuffer out{buf, n, 0};
    while (out.pos == 0) {
      if (in_.pos == in_.size) {
        const size_t got = std::fread(in_buf_.data(), 1, in_buf_.size(), f_);
        if (got == 0) {
          if (std::ferror(f_)) throw Error("cannot read " + path_ + ": " + std::strerror(errno));
          if (!frame_done_) throw Error(path_ + ": zstd data is truncated (the last frame is incomplete)");
          return 0;
        }
        in_ = ZSTD_inBuffer{in_buf_.data(), got, 0};
      }
      const size_t rc = ZSTD_decompressStream(ctx_, &out, &in_);
      if (ZSTD_isError(rc)) throw Error(path_ + ": zstd data is corrupt (" + ZSTD_getErrorName(rc) + ")");
      frame_done_ = rc == 0;
    }
    return out.pos;
  }
  int64_t offset() const override { return static_cast<int64_t>(std::ftell(f_)); }

 private:
  std::string path_;
  std::FILE* f_;
  ZSTD_DStream* ctx_;
  std::vector<char> in_buf_;
  ZSTD_inBuffer in_{nullptr, 0, 0};
  bool frame_done_ = true;
};

}  // namespace

// ------------------------------------------------------------------------------ line reader
struct LineReader::Impl {
  std::string path;
  Compression compression = Compression::kNone;
  std::unique_ptr<ByteSource> source;
  std::vector<char> buf = std::vector<char>(1 << 20);
  size_t pos = 0, end = 0;
  bool eof = false, skip_lf = false, first = true;
  int64_t line = 0, bytes = 0;

  bool fill() {
    if (eof) return false;
    pos = 0;
    end = source->read(buf.data(), buf.size());
    bytes += static_cast<int64_t>(end);
    if (end == 0) eof = true;
    return end > 0;
  }

  void check_utf8(const std::string& s) const {
    for (size_t i = 0; i < s.size();) {
      if (s[i] == '\0')
        throw Error(path + ":" + std::to_string(line) + ": a NUL byte: this looks like a binary file, not UTF-8 text");
      const size_t n = fs::utf8_sequence_length(s, i);
      if (n == 0) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(s[i]));
        throw Error(path + ":" + std::to_string(line) + ":" + std::to_string(i + 1) + ": invalid UTF-8 (byte " + hex +
                    "); the text must be UTF-8 (convert it, e.g. `iconv -f latin1 -t utf-8`)");
      }
      i += n;
    }
  }
};

LineReader::LineReader(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->compression = detect_compression(path);
  switch (impl_->compression) {
    case Compression::kNone: impl_->source = std::make_unique<PlainSource>(path); break;
    case Compression::kGzip: impl_->source = std::make_unique<GzipSource>(path); break;
    case Compression::kZstd: impl_->source = std::make_unique<ZstdSource>(path); break;
  }
}

LineReader::~LineReader() = default;

bool LineReader::next(std::string& out) {
  Impl& r = *impl_;
  out.clear();
  bool any = false;  // a line exists (even empty) once a byte of it or its end was seen
  for (;;) {
    if (r.pos == r.end && !r.fill()) break;
    if (r.skip_lf) {
      r.skip_lf = false;
      if (r.buf[r.pos] == '\n') {
        ++r.pos;
        continue;
      }
    }
    const char* begin = r.buf.data() + r.pos;
    const char* stop = begin;
    const char* limit = r.buf.data() + r.end;
    while (stop < limit && *stop != '\n' && *stop != '\r') ++stop;
    out.append(begin, stop);
    any = true;
    r.pos = static_cast<size_t>(stop - r.buf.data());
    if (stop < limit) {
      r.skip_lf = *stop == '\r';  // CRLF: the LF belongs to this line end
      ++r.pos;
      break;
    }
  }
  if (!any) return false;
  ++r.line;
  if (r.first) {
    r.first = false;
    if (out.compare(0, 3, "\xEF\xBB\xBF") == 0) out.erase(0, 3);
  }
  r.check_utf8(out);
  return true;
}

int64_t LineReader::line_number() const { return impl_->line; }
int64_t LineReader::bytes_read() const { return impl_->bytes; }
int64_t LineReader::file_offset() const { return impl_->source->offset(); }
Compression LineReader::compression() const { return impl_->compression; }
const std::string& LineReader::path() const { return impl_->path; }

}  // namespace tisa::prep
