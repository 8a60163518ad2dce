// TensorBoard events file; see tensorboard_writer.h.
#include "io/tensorboard_writer.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/error.h"
#include "common/fs.h"
#include "io/tf_record.h"

namespace tisa::io {
namespace {

namespace stdfs = std::filesystem;

constexpr const char* kPrefix = "events.out.tfevents.";

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

// events.out.tfevents.<10-digit seconds>.<host>.<pid>.<n>: later files sort after earlier ones.
std::string new_file_name() {
  static std::atomic<int> counter{0};
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%010lld", static_cast<long long>(wall_time_now()));
  return kPrefix + std::string(seconds) + "." + host_name() + "." + std::to_string(::getpid()) + "." +
         std::to_string(counter++);
}

}  // namespace

double wall_time_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

TensorBoardWriter::TensorBoardWriter(const std::string& dir) {
  fs::create_directories(dir);
  path_ = (stdfs::path(dir) / new_file_name()).string();
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error("cannot create TensorBoard events file " + path_ + ": " + std::strerror(errno));
  write_event(tensorboard::file_version_event(wall_time_now()));
}

TensorBoardWriter::~TensorBoardWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void TensorBoardWriter::write_event(const std::string& event) {
  if (fd_ < 0) return;
  const std::string record = frame_record(event);
  // One write(2) per record: a signal cannot leave half of it behind (a short write to a full
  // disk can, and the next resume drops that tail).
  size_t done = 0;
  while (done < record.size()) {
    const ssize_t n = ::write(fd_, record.data() + done, record.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      spdlog::warn("[tensorboard] writing {} failed ({}); no more TensorBoard events for this run (metrics.jsonl "
                   "goes on)",
                   path_, std::strerror(errno));
      ::close(fd_);
      fd_ = -1;
      return;
    }
    done += static_cast<size_t>(n);
  }
}

void TensorBoardWriter::write_scalars(int64_t step, const std::vector<tensorboard::Scalar>& scalars) {
  if (!scalars.empty()) write_event(tensorboard::scalars_event(wall_time_now(), step, scalars));
}

std::vector<std::string> TensorBoardWriter::event_files(const std::string& dir) {
  std::vector<std::string> files;
  if (!stdfs::is_directory(dir)) return files;
  for (const auto& e : stdfs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename().string().rfind(kPrefix, 0) == 0) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::set<std::pair<std::string, int64_t>> TensorBoardWriter::drop_events_after(
    const std::string& dir, int64_t step, const std::set<std::string>& drop_tags) {
  std::set<std::pair<std::string, int64_t>> kept_tags;
  for (const auto& file : event_files(dir)) {
    const std::string bytes = fs::read_file(file);
    const RecordScan scan = scan_records(bytes);
    std::string kept;
    size_t dropped = 0;
    for (const auto record : scan.records) {
      const auto info = tensorboard::read_event_info(record);
      const bool drop = !info.ok || info.step > step ||
                        std::any_of(info.tags.begin(), info.tags.end(), [&](const auto& t) { return drop_tags.count(t); });
      if (drop) {
        ++dropped;
        continue;
      }
      kept += frame_record(record);
      for (const auto& tag : info.tags) kept_tags.insert({tag, info.step});
    }
    if (dropped == 0 && scan.clean) continue;
    fs::write_file_atomic(file, kept);
    spdlog::info("[tensorboard] {}: dropped {} events after step {}{} (they are redone from the checkpoint)", file,
                 dropped, step, scan.clean ? "" : " and an incomplete last record");
  }
  return kept_tags;
}

}  // namespace tisa::io
