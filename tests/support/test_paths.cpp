#include "support/test_paths.h"

#include <sys/wait.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <unistd.h>

namespace tisa::test {

std::string shared_dir() {
  if (const char* env = std::getenv("TISA_SHARED_DIR"); env && *env) return env;
  return TISA_SHARED_DIR;
}
std::string shared_path(const std::string& rel) { return shared_dir() + "/" + rel; }
std::string source_dir() { return TISA_SOURCE_DIR; }
std::string bin_dir() { return TISA_BIN_DIR; }

std::string make_temp_dir(const std::string& tag) {
  static std::atomic<int> counter{0};
  auto base = std::filesystem::temp_directory_path() /
              ("tisa_test_" + tag + "_" + std::to_string(::getpid()) + "_" +
               std::to_string(counter++));
  std::filesystem::remove_all(base);
  std::filesystem::create_directories(base);
  return base.string();
}

bool file_exists(const std::string& path) { return std::filesystem::exists(path); }

int run(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace tisa::test
