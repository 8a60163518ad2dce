// See gzip_file.h.
#include "report/gzip_file.h"

#include <zlib.h>

#include <memory>

#include "common/error.h"

namespace tisa::report {

std::string read_gzip_file(const std::string& path) {
  const std::unique_ptr<gzFile_s, int (*)(gzFile)> f(::gzopen(path.c_str(), "rb"), ::gzclose);
  if (!f) throw Error(path + ": cannot open the gzip file");
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const int got = ::gzread(f.get(), buf, sizeof buf);
    // At the end zlib reports Z_BUF_ERROR when the file stopped inside a gzip stream (truncated).
    int code = Z_OK;
    const char* msg = ::gzerror(f.get(), &code);
    if (got < 0 || (got == 0 && code != Z_OK))
      throw Error(path + ": gzip data is corrupt or truncated (" + std::string(msg ? msg : "?") + ")");
    if (got == 0) return out;
    out.append(buf, static_cast<size_t>(got));
  }
}

}  // namespace tisa::report
