// `tisa-train pretrain`: ALBERT MLM + SOP pretraining from a YAML config (SPEC §5).
//
//   tisa-train pretrain --config configs/pretrain/tiny.yaml [--set key=value]... [--run-dir DIR]
//   tisa-train pretrain --run-dir runs/tiny-20240101-120000 --resume      (after Ctrl-C / a crash)
//   tisa-train pretrain --config configs/pretrain/small.yaml --init some/hf_dir
//   tisa-train pretrain --config ... --dump-batches DIR   (batches for a peer trainer, train/batch_dump.h)
//
// The run directory defaults to runs/<config name>-<timestamp> (a "-N" suffix when that name is
// taken). With --resume and no --run-dir, the newest runs/<config name>-* folder is continued; with
// --resume and no --config, the run's own config.yaml is used. Without --resume a directory that
// already holds a run is refused unless --overwrite (common/run_directory.h). Exit code 130 after
// SIGINT/SIGTERM (a checkpoint was saved).
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "cli_nn/commands.h"
#include "common/cli_checks.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/run_directory.h"
#include "config/config_loader.h"
#include "config/position_variant.h"
#include "train/pretrainer.h"

namespace tisa::cli {
namespace {
namespace stdfs = std::filesystem;

struct PretrainArgs {
  std::string config_path, run_dir, init_dir, dump_batches_dir, position;
  std::vector<std::string> overrides;
  bool resume = false, overwrite = false;
  int64_t stop_after_step = -1;
};

// Newest runs/<name>-* folder (by name: timestamps sort), or "" when none exists.
std::string newest_run_of(const std::string& name) {
  std::string best;
  if (!fs::exists("runs")) return best;
  for (const auto& e : stdfs::directory_iterator("runs")) {
    const auto folder = e.path().filename().string();
    if (e.is_directory() && folder.rfind(name + "-", 0) == 0 && e.path().string() > best) best = e.path().string();
  }
  return best;
}

void run_pretrain(const PretrainArgs& a) {
  if (a.config_path.empty() && !(a.resume && !a.run_dir.empty()))
    throw Error("pretrain: --config is required (it may be omitted only with --resume --run-dir DIR)");
  std::string name = a.config_path.empty() ? "" : stdfs::path(a.config_path).stem().string();
  // --position V: the variant's two keys, before --set (which may still change them).
  std::vector<std::string> overrides;
  if (!a.position.empty()) {
    config::ModelConfig variant;
    config::apply_position_variant(a.position, variant, "pretrain --position");
    overrides = {std::string("model.position.absolute=") + (variant.position.absolute ? "true" : "false"),
                 "model.position.relative=" + variant.position.relative};
    if (!name.empty()) name += "-" + a.position;
  }
  overrides.insert(overrides.end(), a.overrides.begin(), a.overrides.end());
  std::string run_dir = a.run_dir;
  // [dist] ranks would pick different timestamps (or race for the newest folder): one explicit folder.
  const char* world = std::getenv("WORLD_SIZE");
  if (run_dir.empty() && world && std::atoi(world) > 1)
    throw Error("pretrain: with several processes (WORLD_SIZE=" + std::string(world) +
                ") pass --run-dir so that all ranks share one run directory");
  if (run_dir.empty() && a.resume) {
    run_dir = newest_run_of(name);
    if (run_dir.empty()) throw Error("--resume: no runs/" + name + "-* folder found; pass --run-dir");
  }
  if (a.resume && !stdfs::is_directory(run_dir))
    throw Error("--resume: run directory " + run_dir + " does not exist (hint: check --run-dir)");
  // Load the config before creating a default run directory, so that a bad config leaves none.
  const std::string config_path = a.config_path.empty() ? run_dir + "/config.yaml" : a.config_path;
  config::Config cfg = config::load_config(config_path, overrides);
  if (run_dir.empty()) run_dir = create_unique_run_dir("runs", name);
  train::PretrainRunOptions options;
  options.run_dir = run_dir;
  options.resume = a.resume;
  options.overwrite = a.overwrite;
  options.init_dir = a.init_dir;
  options.stop_after_step = a.stop_after_step;
  options.dump_batches_dir = a.dump_batches_dir;
  auto result = train::run_pretraining(cfg, options);
  if (result.exit_code != kExitOk) {
    spdlog::default_logger()->flush();
    std::exit(result.exit_code);  // kExitInterrupted: a checkpoint was saved (message logged)
  }
}

}  // namespace

void add_pretrain_command(CLI::App& app) {
  auto args = std::make_shared<PretrainArgs>();
  auto* cmd = app.add_subcommand("pretrain", "pretrain ALBERT with MLM + SOP from a YAML config");
  cmd->add_option("--config", args->config_path, "YAML config, e.g. configs/pretrain/tiny.yaml");
  cmd->add_option("--set", args->overrides, "override a config key, e.g. --set model.position.relative=tisa (repeatable)");
  cmd->add_option("--position", args->position,
                  "position variant: absolute, <scheme> or absolute_<scheme> (sets model.position.absolute and "
                  ".relative; see `tisa-train model variants`)");
  cmd->add_option("--run-dir", args->run_dir,
                  "run directory (default runs/<config name>[-<position>]-<timestamp>)");
  cmd->add_option("--stop-after-step", args->stop_after_step,
                  "behave as if interrupted after update N: save a checkpoint, exit 130 (resume checks)")
      ->check(integer_at_least(args->stop_after_step, 1));
  auto* resume = cmd->add_flag("--resume", args->resume, "continue from the newest valid checkpoint of the run directory");
  auto* overwrite = cmd->add_flag(
      "--overwrite", args->overwrite,
      "start afresh in a run directory that already holds a run, deleting its checkpoints and final/");
  auto* init = cmd->add_option("--init", args->init_dir, "start from the weights of this Hugging Face model directory");
  auto* dump = cmd->add_option("--dump-batches", args->dump_batches_dir,
                               "write the initial weights and every update's batch and losses into this new folder, "
                               "for a peer trainer (tests/hf/train_peer.py)");
  // A resumed run continues from its own checkpoint: replacing it or other start weights contradict that.
  resume->excludes(overwrite)->excludes(init)->excludes(dump);
  cmd->callback([args] { run_pretrain(*args); });
}

}  // namespace tisa::cli
