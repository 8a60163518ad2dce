#include "common/subprocess.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "common/fs.h"

extern char** environ;

namespace tisa {
namespace {
std::vector<char*> to_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  out.reserve(argv.size() + 1);
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}
}  // namespace

std::string sibling_executable(const std::string& name) {
  std::string path = fs::executable_dir() + "/" + name;
  if (::access(path.c_str(), X_OK) != 0)
    throw Error("cannot find the executable " + path +
                " (tisa-train runs its sibling programs from its own folder; rebuild with "
                "scripts/setup.sh or install all three together)");
  return path;
}

int run_child(const std::vector<std::string>& argv) {
  TISA_CHECK(!argv.empty(), "run_child needs a program");
  auto cargv = to_argv(argv);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, argv[0].c_str(), nullptr, nullptr, cargv.data(), environ);
  if (rc != 0) throw Error("cannot start " + argv[0] + ": " + std::strerror(rc));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw Error("waiting for " + argv[0] + " failed: " + std::strerror(errno));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitError;
}

void run_child_checked(const std::vector<std::string>& argv) {
  int rc = run_child(argv);
  if (rc != 0) {
    std::string cmd;
    for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    throw Error("'" + cmd + "' failed with exit code " + std::to_string(rc));
  }
}

void exec_replace(const std::vector<std::string>& argv) {
  TISA_CHECK(!argv.empty(), "exec_replace needs a program");
  auto cargv = to_argv(argv);
  ::execv(argv[0].c_str(), cargv.data());
  throw Error("cannot execute " + argv[0] + ": " + std::strerror(errno));
}

}  // namespace tisa
