// tisa::Error — the one exception type of tisa-train (STYLE §6).
//
// Thrown where a problem is found, with a message that names the file, line or key and what was
// expected; caught in each executable's main(), logged, and turned into exit code kExitError.
// Torch-free code reports errors only through this type.
#pragma once
#include <stdexcept>
#include <string>

namespace tisa {

// Process exit codes shared by all three executables (the front propagates the children's).
constexpr int kExitOk = 0;
constexpr int kExitError = 1;        // bad input, bad config, corrupt file: message says which
constexpr int kExitUsage = 2;        // command-line syntax (CLI11)
constexpr int kExitInterrupted = 130;  // SIGINT/SIGTERM after a clean save

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Builds "<what> (at file.cpp:123)" for internal invariant failures; user-facing errors should
// rather name the user's file/key and omit source locations.
[[noreturn]] void throw_internal(const char* file, int line, const std::string& what);

}  // namespace tisa

// TISA_CHECK(cond, message): internal invariant; the message is a std::string expression.
#define TISA_CHECK(cond, message)                                   \
  do {                                                              \
    if (!(cond)) ::tisa::throw_internal(__FILE__, __LINE__, (message)); \
  } while (0)
