// Logging set-up: spdlog to the console (stderr) and, once a run directory exists, also to
// <run_dir>/train.log. Log lines carry a stage tag by convention: "[data] ...", "[train] ...".
#pragma once
#include <spdlog/sinks/sink.h>

#include <memory>
#include <string>

namespace tisa::logging {

// Console logger at `level` ("trace", "debug", "info", "warn", "error"). Idempotent.
void init_console(const std::string& level = "info");

// Adds a file sink writing to `path` (appending), keeping the console sink.
void add_file_sink(const std::string& path);

// <run_dir>/train.log for the lifetime of one run (pretraining, one GLUE fine-tuning): a file sink
// added to the default logger and removed again, so that several runs in one process (seeds,
// tasks, tests) do not write into each other's logs.
class RunLogFile {
 public:
  explicit RunLogFile(const std::string& path);
  ~RunLogFile();
  RunLogFile(const RunLogFile&) = delete;
  RunLogFile& operator=(const RunLogFile&) = delete;
  // Writes a fatal error into this file only: main() prints it on the console after the run has
  // unwound (and this sink is gone), so a run's own log still says why it ended.
  void record_fatal(const std::string& what);

 private:
  std::shared_ptr<spdlog::sinks::sink> sink_;
};

}  // namespace tisa::logging
