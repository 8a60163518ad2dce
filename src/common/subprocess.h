// Running sibling executables. The front `tisa-train` replaces itself with `tisa-nn` or
// `tisa-text` (exec, as git does for its commands), and `tisa-nn` runs `tisa-text` as a child
// when it needs text processing (e.g. tokenising GLUE TSVs before fine-tuning).
#pragma once
#include <string>
#include <vector>

namespace tisa {

// Path of a sibling executable `name` installed next to the running one; throws tisa::Error with
// a hint when it is missing.
std::string sibling_executable(const std::string& name);

// Runs `argv` (argv[0] = program path) as a child, waits, and returns its exit code
// (128 + signal number when it was killed by a signal). Output goes to our stdout/stderr.
int run_child(const std::vector<std::string>& argv);

// Like run_child but throws tisa::Error("<program> failed with exit code N") on non-zero exit.
void run_child_checked(const std::vector<std::string>& argv);

// Replaces the current process by `argv` (execv); only returns by throwing tisa::Error.
[[noreturn]] void exec_replace(const std::vector<std::string>& argv);

}  // namespace tisa
