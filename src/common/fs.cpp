#include "common/fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "common/error.h"

namespace tisa::fs {
namespace {
std::string errno_text() { return std::strerror(errno); }
}  // namespace

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open " + path + ": " + errno_text());
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) throw Error("cannot read " + path + ": " + errno_text());
  return out.str();
}

size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  const unsigned c = byte(i);
  if (c < 0x80) return 1;
  size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  const unsigned c1 = byte(i + 1);
  // Second-byte ranges that exclude overlong forms, surrogates and code points past U+10FFFF.
  const unsigned lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
  const unsigned hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
  if (c1 < lo || c1 > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  return n;
}


std::string read_utf8_text_file(const std::string& path) {
  std::string data = read_file(path);
  const std::string_view s(data);
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '\0')
      throw Error(path + " looks like a binary file (a NUL byte at offset " + std::to_string(i) +
                  "), not UTF-8 text");
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(s[i]));
      throw Error(path + ":" + std::to_string(line) + ":" + std::to_string(i - line_start + 1) +
                  ": invalid UTF-8 (byte " + hex + "); the text must be UTF-8 (convert it, e.g. "
                  "`iconv -f latin1 -t utf-8`)");
    }
    if (s[i] == '\n') ++line, line_start = i + 1;
    i += n;
  }
  return data;
}

void fsync_path(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return;  // best effort for directories on exotic file systems
  ::fsync(fd);
  ::close(fd);
}

void write_file_atomic(const std::string& path, std::string_view data) {
  std::filesystem::path target(path);
  std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  std::random_device rd;
  std::string tmp = (dir / ("." + target.filename().string() + ".tmp" + std::to_string(rd()))).string();
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw Error("cannot create " + tmp + ": " + errno_text());
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::string why = errno_text();
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error("cannot write " + tmp + ": " + why);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw Error("cannot flush " + tmp + ": " + why);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw Error("cannot rename " + tmp + " to " + path + ": " + why);
  }
  fsync_path(dir.string());
}

void create_directories(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw Error("cannot create directory " + path + ": " + ec.message());
}

bool exists(const std::string& path) { return std::filesystem::exists(path); }

std::string executable_dir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot resolve /proc/self/exe: " + ec.message());
  return exe.parent_path().string();
}

uint64_t fnv1a64(std::string_view data, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string to_hex(uint64_t value) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value));
  return buf;
}

std::string file_hash_hex(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open " + path + ": " + errno_text());
  uint64_t h = 0xcbf29ce484222325ULL;
  std::string buf(1 << 20, '\0');
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h = fnv1a64(std::string_view(buf.data(), static_cast<size_t>(in.gcount())), h);
  }
  return to_hex(h);
}

}  // namespace tisa::fs
