#include "common/logging.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/error.h"

namespace tisa::logging {

void init_console(const std::string& level) {
  auto logger = spdlog::get("tisa");
  if (!logger) {
    auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    logger = std::make_shared<spdlog::logger>("tisa", sink);
    spdlog::register_logger(logger);
    spdlog::set_default_logger(logger);
  }
  logger->set_pattern("%Y-%m-%d %H:%M:%S %^%l%$ %v");
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off")
    throw Error("unknown log level '" + level + "' (expected trace, debug, info, warn, error)");
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::info);
}

void add_file_sink(const std::string& path) {
  init_console();
  auto logger = spdlog::default_logger();
  auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, /*truncate=*/false);
  sink->set_pattern("%Y-%m-%d %H:%M:%S.%e %l %v");
  logger->sinks().push_back(sink);
}

RunLogFile::RunLogFile(const std::string& path) {
  add_file_sink(path);
  sink_ = spdlog::default_logger()->sinks().back();
}

RunLogFile::~RunLogFile() {
  auto& sinks = spdlog::default_logger()->sinks();
  sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
}

void RunLogFile::record_fatal(const std::string& what) {
  spdlog::logger file_only("train.log", sink_);
  file_only.error("{}", what);
  file_only.flush();
}

}  // namespace tisa::logging
