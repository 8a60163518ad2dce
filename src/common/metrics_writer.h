// JSONL metrics stream: one JSON object per line and per event, each with "event", "step" and
// "time" (seconds since the writer was opened) plus the event's values. Lines are flushed as they
// are written so that `tail -f metrics.jsonl` and plotting a live run work.
#pragma once
#include <chrono>
#include <cstdint>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

namespace tisa {

class MetricsWriter {
 public:
  MetricsWriter() = default;  // disabled writer: write() does nothing (e.g. non-zero DDP ranks)
  // Opens `path` for appending (a resumed run continues the same file).
  explicit MetricsWriter(const std::string& path);

  // Writes {"event": event, "step": step, "time": t, ...values}.
  void write(const std::string& event, int64_t step, const nlohmann::json& values);
  bool enabled() const { return out_.is_open(); }

  // Rewrites the stream at `path` (atomically) without the records of steps after `step` and
  // without lines that are not complete JSON objects (a write cut short by a crash), so that a run
  // resumed from the checkpoint of `step` does not leave records of steps it redoes. Call before
  // opening a writer on `path`; a missing file is fine.
  static void drop_records_after(const std::string& path, int64_t step);

 private:
  std::ofstream out_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace tisa
