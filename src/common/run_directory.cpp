// Run-directory ownership; see run_directory.h.
#include "common/run_directory.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <system_error>

#include "common/error.h"
#include "common/fs.h"

namespace tisa {
namespace {

namespace stdfs = std::filesystem;

constexpr const char* kLockFile = ".lock";

bool matches(const std::string& name, const std::string& pattern) {
  if (!pattern.empty() && pattern.back() == '*') return name.rfind(pattern.substr(0, pattern.size() - 1), 0) == 0;
  return name == pattern;
}

// A run's own entry: one of the layout's names, or a temp file an atomic write left behind.
bool written_by_run(const std::string& name, const RunLayout& layout) {
  if (name.size() > 1 && name[0] == '.' && name.find(".tmp") != std::string::npos) return true;
  for (const auto& e : layout.entries)
    if (matches(name, e)) return true;
  return false;
}

std::string list(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 6; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 6) out += ", ... (" + std::to_string(names.size()) + " entries)";
  return out;
}

std::string now_text() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

// "pid 123 on host h since 2026-11-30 12:00:00" as the owner wrote it (trimmed), or "".
std::string read_owner(int fd) {
  char buf[256] = {0};
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string s = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

const RunLayout& pretraining_run_layout() {
  static const RunLayout layout{"pretraining run",
                                {"config.yaml", "train.log", "metrics.jsonl", "tensorboard", "checkpoints", "final"},
                                "continue it with --resume", "checkpoints"};
  return layout;
}

const RunLayout& glue_task_layout() {
  static const RunLayout layout{"GLUE run", {"data", "seed-*", "results.json"}, "choose another --run-dir", ""};
  return layout;
}

RunDirectory::RunDirectory(std::string path, Start start, std::string option)
    : path_(std::move(path)), option_(std::move(option)) {
  if (path_.empty()) throw Error("no run directory given");
  if (start == Start::kContinue && !stdfs::is_directory(path_))
    throw Error(stdfs::exists(path_) ? "run directory " + path_ + " is not a folder"
                                     : "run directory " + path_ + " does not exist (hint: check --run-dir; start a "
                                                                  "new run without --resume)");
  fs::create_directories(path_);
  const std::string lock_path = (stdfs::path(path_) / kLockFile).string();
  lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) throw Error("cannot open " + lock_path + ": " + std::strerror(errno));
  const std::string previous = read_owner(lock_fd_);
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string owner = read_owner(lock_fd_);
    ::close(lock_fd_);
    lock_fd_ = -1;
    if (err == EWOULDBLOCK)
      throw Error((option_ == "--run-dir" ? "run directory " : option_ + " folder ") + path_ +
                  " is in use by another tisa-train process (" + (owner.empty() ? "owner unknown" : owner) +
                  "); wait for it to finish, stop it, or choose another " + option_);
    throw Error("cannot lock " + lock_path + ": " + std::strerror(err));
  }
  // The kernel released the previous owner's lock when it exited: if its record is still there, it
  // did not end cleanly (crash, SIGKILL, power loss).
  if (!previous.empty())
    spdlog::warn("[run] {}: the previous owner ({}) ended without releasing the directory; taking it over", path_,
                 previous);
  const std::string me = "pid " + std::to_string(::getpid()) + " on host " + host_name() + " since " + now_text();
  if (::ftruncate(lock_fd_, 0) != 0 || ::pwrite(lock_fd_, me.data(), me.size(), 0) < 0)
    spdlog::warn("[run] cannot record the owner in {}: {}", lock_path, std::strerror(errno));
}

RunDirectory::~RunDirectory() {
  if (lock_fd_ < 0) return;
  // An empty record marks a clean release; the file itself stays (unlinking it would let two
  // processes lock two different files of the same name).
  if (::ftruncate(lock_fd_, 0) != 0) {
  }
  ::flock(lock_fd_, LOCK_UN);
  ::close(lock_fd_);
}

void RunDirectory::start_fresh(const std::string& sub, const RunLayout& layout, bool overwrite) const {
  const stdfs::path dir = sub.empty() ? stdfs::path(path_) : stdfs::path(path_) / sub;
  fs::create_directories(dir.string());
  std::vector<std::string> ours, foreign;
  for (const auto& e : stdfs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name == kLockFile) continue;
    (written_by_run(name, layout) ? ours : foreign).push_back(name + (e.is_directory() ? "/" : ""));
  }
  if (ours.empty() && foreign.empty()) return;
  std::sort(ours.begin(), ours.end());
  std::sort(foreign.begin(), foreign.end());
  if (!overwrite) {
    if (ours.empty())
      throw Error(dir.string() + " holds files that no tisa-train run wrote (" + list(foreign) +
                  "); choose another --run-dir, or an empty or new folder (--overwrite does not delete such files)");
    const std::string also =
        foreign.empty() ? "" : "; it also holds files no run wrote (" + list(foreign) + "), which --overwrite refuses";
    const stdfs::path progress = dir / layout.progress_entry;
    if (!layout.progress_entry.empty() && (!stdfs::is_directory(progress) || stdfs::is_empty(progress)))
      throw Error(dir.string() + " holds a " + layout.kind + " that stopped before writing anything into " +
                  layout.progress_entry + "/ (" + list(ours) + "), so it cannot be continued" + also +
                  ": pass --overwrite to delete it and start again, or choose another --run-dir");
    throw Error(dir.string() + " already holds a " + layout.kind + " (" + list(ours) +
                "); a fresh run does not replace it: " + layout.continue_hint +
                ", or pass --overwrite to delete it and start again" + also);
  }
  if (!foreign.empty())
    throw Error("--overwrite: " + dir.string() + " also holds files that are not part of a " + layout.kind + " (" +
                list(foreign) + "); remove them yourself or choose another --run-dir");
  for (const auto& name : ours) {
    std::error_code ec;
    const auto entry = dir / (name.back() == '/' ? name.substr(0, name.size() - 1) : name);
    stdfs::remove_all(entry, ec);
    if (ec) throw Error("--overwrite: cannot delete " + entry.string() + ": " + ec.message());
  }
  spdlog::warn("[run] --overwrite: deleted the previous {} in {} ({})", layout.kind, dir.string(), list(ours));
}

std::string create_unique_run_dir(const std::string& parent, const std::string& stem) {
  fs::create_directories(parent);
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  const std::string base = (stdfs::path(parent) / (stem + "-" + stamp)).string();
  for (int n = 1; n < 10000; ++n) {
    const std::string candidate = n == 1 ? base : base + "-" + std::to_string(n);
    if (::mkdir(candidate.c_str(), 0755) == 0) return candidate;  // atomic: exactly one process gets it
    if (errno != EEXIST) throw Error("cannot create run directory " + candidate + ": " + std::strerror(errno));
  }
  throw Error("cannot find a free run directory name " + base + "-N");
}

}  // namespace tisa
