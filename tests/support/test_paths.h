// Paths that tests need: the shared/ folder (real data, goldens), the source tree and the built
// executables. Tests that need shared/ call TISA_REQUIRE_SHARED(path), which skips with a visible
// message when the file is absent (e.g. a checkout without ../shared).
#pragma once
#include <string>

namespace tisa::test {
// Root of shared/ (env TISA_SHARED_DIR overrides the build-time default).
std::string shared_dir();
// shared_dir() + "/" + rel.
std::string shared_path(const std::string& rel);
std::string source_dir();
// Folder holding tisa-train, tisa-text and tisa-nn.
std::string bin_dir();
// A fresh empty temporary directory, unique per call.
std::string make_temp_dir(const std::string& tag);
bool file_exists(const std::string& path);
// Runs a shell command line; returns its exit code (-1 when it did not exit normally).
int run(const std::string& cmd);
// Whole file as bytes ("" when it cannot be read).
std::string slurp(const std::string& path);
// Python with torch + transformers for the Hugging Face interop tests: $TISA_PYTHON, else the
// build's TISA_PYTHON (CMake cache; default ~/.cache/tisa-train/venv-torch2/bin/python).
std::string hf_python();
// Why tests/hf/hf_interop.py cannot run here ("" when it can); checked once per process.
const std::string& hf_python_problem();
// Runs tests/hf/hf_interop.py with `args` (already quoted); returns "" on success, else the command
// and its output.
std::string run_hf_python(const std::string& args);
}  // namespace tisa::test

#define TISA_REQUIRE_SHARED(rel)                                                        \
  do {                                                                                  \
    if (!::tisa::test::file_exists(::tisa::test::shared_path(rel)))                     \
      GTEST_SKIP() << "shared data not found: " << ::tisa::test::shared_path(rel)       \
                   << " (set TISA_SHARED_DIR to the shared/ folder)";                   \
  } while (0)

// Skips the test, saying why, when the Python side of the HF interop tests is not available.
#define TISA_REQUIRE_HF_PYTHON()                                                        \
  do {                                                                                  \
    if (!::tisa::test::hf_python_problem().empty()) GTEST_SKIP() << ::tisa::test::hf_python_problem(); \
  } while (0)
