// Reading a gzip-compressed text file whole (the archived dev predictions of a reproduction,
// scripts/archive_reproduction.sh, are stored as .json.gz).
#pragma once
#include <string>

namespace tisa::report {

// The decompressed contents of the gzip file at `path`; throws tisa::Error naming the file when it
// cannot be opened or its data are corrupt or truncated.
std::string read_gzip_file(const std::string& path);

}  // namespace tisa::report
