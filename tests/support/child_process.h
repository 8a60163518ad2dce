// Integration-test helpers for runs that are interrupted: start `tisa-train` in the background,
// wait for its first sealed checkpoint, and collect its exit status (128 + signal when killed).
#pragma once
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/test_paths.h"

extern char** environ;

namespace tisa::test {

// The words of `s`, split at whitespace.
inline std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Starts `tisa-train <args>` (stdout and stderr into `log`) and returns its pid: the front
// exec()s the trainer, so the pid is the trainer's.
inline pid_t start_tisa_train(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> argv = {bin_dir() + "/tisa-train"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = -1;
  EXPECT_EQ(posix_spawn(&pid, cargv[0], &fa, nullptr, cargv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

// Waits until `dir` holds a sealed checkpoint (at most 120 s); false when none appeared.
inline bool wait_for_checkpoint(const std::string& dir) {
  namespace stdfs = std::filesystem;
  for (int i = 0; i < 12000; ++i) {
    if (stdfs::is_directory(dir))
      for (const auto& e : stdfs::directory_iterator(dir))
        if (e.path().filename().string().rfind("step-", 0) == 0 && stdfs::exists(e.path() / "manifest.json"))
          return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// The exit status of `pid` once it ends: its exit code, or 128 + the signal that ended it.
inline int wait_exit(pid_t pid) {
  int st = 0;
  ::waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

}  // namespace tisa::test
