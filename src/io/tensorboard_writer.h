// One TensorBoard events file (events.out.tfevents.<seconds>.<host>.<pid>.<n>) in a run's
// tensorboard/ folder. Every event is one TFRecord (io/tf_record.h) appended with a single
// write(2) as soon as it is given, so that a live `tensorboard --logdir` follows the run and a
// crash or SIGKILL leaves only whole records. Resuming: drop_events_after() first rewrites the
// folder's files without the steps to be redone, then a new writer starts a new file.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "io/tensorboard_events.h"

namespace tisa::io {

// Seconds since the Unix epoch (Event.wall_time).
double wall_time_now();

class TensorBoardWriter {
 public:
  // Creates `dir` and a new events file in it that starts with the file_version event; throws
  // tisa::Error naming the file when it cannot.
  explicit TensorBoardWriter(const std::string& dir);
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  // Appends one serialised Event (tensorboard_events.h). A failed write is logged once and turns
  // the writer off: the training goes on (metrics.jsonl still has every value).
  void write_event(const std::string& event);
  void write_scalars(int64_t step, const std::vector<tensorboard::Scalar>& scalars);
  const std::string& path() const { return path_; }

  // Rewrites (atomically) each events file of `dir` without the events of steps after `step`,
  // without events holding a tag of `drop_tags`, and without an incomplete or corrupt tail (a
  // write cut by a crash). Returns the (tag, step) of every event kept. A missing folder is fine.
  static std::set<std::pair<std::string, int64_t>> drop_events_after(const std::string& dir, int64_t step,
                                                 const std::set<std::string>& drop_tags);
  // The events files of `dir`, sorted by name (the order TensorBoard reads them in).
  static std::vector<std::string> event_files(const std::string& dir);

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace tisa::io
