// Shared main() body of tisa-text and tisa-nn: CLI11 parsing with defaults shown in --help,
// console logging, and the one place where tisa::Error becomes a message and an exit code.
#pragma once
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <exception>
#include <functional>
#include <string>

#include "common/error.h"
#include "common/logging.h"

namespace tisa::cli {

inline int run_cli_main(const char* name, const char* description, int argc, char** argv,
                        const std::function<void(CLI::App&)>& add_commands) {
  CLI::App app{description, name};
  app.option_defaults()->always_capture_default();
  app.require_subcommand(1);
  std::string log_level = "info";
  // Applied as soon as it is parsed, before any subcommand's callback runs.
  app.add_option("--log-level", log_level, "trace, debug, info, warn or error")
      ->each([](const std::string& level) { logging::init_console(level); });
  add_commands(app);
  try {
    logging::init_console("info");
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help); every usage error maps to one documented code.
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  } catch (const Error& e) {
    spdlog::error("{}", e.what());
    return kExitError;
  } catch (const std::exception& e) {
    // Not a tisa::Error: a problem no check caught. One line, without the ~30 stack frames that
    // LibTorch appends to its messages ("Exception raised from ...").
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    spdlog::error("unexpected error: {}", what);
    return kExitError;
  }
  return kExitOk;
}

}  // namespace tisa::cli
