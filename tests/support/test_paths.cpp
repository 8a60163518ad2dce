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

std::string hf_python() {
  if (const char* env = std::getenv("TISA_PYTHON"); env && *env) return env;
  return TISA_PYTHON;
}

namespace {
std::string hf_script() { return source_dir() + "/tests/hf/hf_interop.py"; }
}  // namespace

const std::string& hf_python_problem() {
  static const std::string problem = [] {
    const std::string py = hf_python();
    if (py.empty() || !file_exists(py))
      return "no Python with torch + transformers: set TISA_PYTHON or create ~/.cache/tisa-train/venv-torch2 "
             "from scripts/requirements-torch2.txt (looked for '" + py + "')";
    const std::string log = make_temp_dir("hf_py_check") + "/log.txt";
    if (run("OMP_WAIT_POLICY=PASSIVE '" + py + "' '" + hf_script() + "' check > '" + log + "' 2>&1") != 0) {
      std::string why = slurp(log);
      if (why.size() > 300) why = "..." + why.substr(why.size() - 300);
      return "'" + py + "' lacks the pinned torch / transformers / safetensors "
             "(pip install -r scripts/requirements-torch2.txt): " + why;
    }
    return std::string();
  }();
  return problem;
}

std::string run_hf_python(const std::string& args) {
  const std::string log = make_temp_dir("hf_py") + "/log.txt";
  const std::string cmd = "OMP_WAIT_POLICY=PASSIVE '" + hf_python() + "' '" + hf_script() + "' " + args + " > '" + log +
                          "' 2>&1";
  if (run(cmd) == 0) return "";
  return cmd + "\n" + slurp(log);
}

}  // namespace tisa::test
