// Shared main() body of tisa-text and tisa-nn: CLI11 parsing with defaults shown in --help,
// console logging, and the one place where tisa::Error becomes a message and an exit code.
#pragma once
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>
#include <functional>
#include <string>

#include "common/error.h"
#include "common/logging.h"

namespace tisa::cli {

// For `model forwad`, where CLI11 says only "A subcommand is required": the command path and the
// unknown word with the known subcommands, or "" when the command line names no unknown word.
inline std::string unknown_subcommand(const CLI::App& app, int argc, char** argv) {
  const CLI::App* at = &app;
  std::string path = app.get_name();
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.rfind("-", 0) == 0) {  // an option; skip its value when it takes one ("--log-level debug")
      const CLI::Option* opt = at->get_option_no_throw(word);
      if (opt && opt->get_items_expected_min() > 0 && word.find('=') == std::string::npos) ++i;
      continue;
    }
    const CLI::App* next = nullptr;
    std::string known;
    for (const CLI::App* sub : at->get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->get_name() == word) next = sub;
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    if (next) {
      at = next;
      path += " " + word;
    } else if (at->get_require_subcommand_min() > 0 && !known.empty()) {
      return path + ": unknown subcommand '" + word + "' (expected one of: " + known + ")";
    } else {
      return "";
    }
  }
  return "";
}

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
    if (const std::string unknown = unknown_subcommand(app, argc, argv); !unknown.empty() && e.get_exit_code() != 0) {
      std::fprintf(stderr, "%s\nRun with --help for more information.\n", unknown.c_str());
      return kExitUsage;
    }
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
