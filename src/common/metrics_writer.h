// JSONL metrics stream: one JSON object per line and per event, each with "event", "step" and
// "time" (seconds since the writer was opened) plus the event's values. Lines are flushed as they
// are written so that `tail -f metrics.jsonl` and plotting a live run work. A sink (e.g. the
// run's TensorBoard events, train/tensorboard_run.h) receives every record as well.
#pragma once
#include <chrono>
#include <cstdint>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tisa {

// Receives each record MetricsWriter writes, after its line is written.
class MetricsSink {
 public:
  virtual ~MetricsSink() = default;
  virtual void record(const std::string& event, int64_t step, const nlohmann::json& values) = 0;
};

// One line of a metrics stream: its event, step and values (without "event", "step", "time").
struct MetricsRecord {
  std::string event;
  int64_t step = 0;
  nlohmann::json values;
};

class MetricsWriter {
 public:
  MetricsWriter() = default;  // disabled writer: write() does nothing (e.g. non-zero DDP ranks)
  // Opens `path` for appending (a resumed run continues the same file).
  explicit MetricsWriter(const std::string& path);

  // Writes {"event": event, "step": step, "time": t, ...values}.
  void write(const std::string& event, int64_t step, const nlohmann::json& values);
  bool enabled() const { return out_.is_open(); }
  // Also hands every record to `sink` (not owned; it must outlive this writer; null: none).
  void set_sink(MetricsSink* sink) { sink_ = sink; }

  // Rewrites the stream at `path` (atomically) without the records of steps after `step` and
  // without lines that are not complete JSON objects (a write cut short by a crash), so that a run
  // resumed from the checkpoint of `step` does not leave records of steps it redoes. Call before
  // opening a writer on `path`; a missing file is fine.
  static void drop_records_after(const std::string& path, int64_t step);
  // The records of the stream at `path` in file order (a missing file: none); a line that is not
  // a JSON object with an integer "step" and a string "event" is an error naming file and line.
  static std::vector<MetricsRecord> read_records(const std::string& path);

 private:
  std::ofstream out_;
  std::mutex mutex_;
  MetricsSink* sink_ = nullptr;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace tisa
