// Logging set-up: spdlog to the console (stderr) and, once a run directory exists, also to
// <run_dir>/train.log. Log lines carry a stage tag by convention: "[data] ...", "[train] ...".
#pragma once
#include <string>

namespace tisa::logging {

// Console logger at `level` ("trace", "debug", "info", "warn", "error"). Idempotent.
void init_console(const std::string& level = "info");

// Adds a file sink writing to `path` (appending), keeping the console sink.
void add_file_sink(const std::string& path);

}  // namespace tisa::logging
