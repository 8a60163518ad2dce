// The GLUE resume check; see glue_resume.h.
#include "glue/glue_resume.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "common/fs.h"
#include "common/output_guard.h"
#include "config/config_loader.h"
#include "train/architecture_check.h"

namespace tisa::glue {

namespace stdfs = std::filesystem;

std::string init_identity(const std::string& init_dir) {
  std::string listing;  // "name hash" per file: a renamed or replaced file changes the identity
  for (const auto& path : model_folder_inputs(init_dir))
    listing += stdfs::path(path).filename().string() + " " + fs::file_hash_hex(path) + "\n";
  return fs::to_hex(fs::fnv1a64(listing));
}

std::vector<std::string> glue_keys_allowed_to_change_on_resume() {
  // glue.init is the folder's path: the model may move, glue.init_identity (its content) may not.
  // glue.eval_interval is not here: it decides which steps compete for the best model.
  return {"glue.init",           "training.log_interval", "training.checkpoint_interval",
          "training.keep_checkpoints", "training.threads",      "training.device"};
}

void check_glue_resume(const std::string& seed_dir, const config::Config& requested) {
  const std::string path = (stdfs::path(seed_dir) / "config.yaml").string();
  if (!fs::exists(path)) return;
  config::Config recorded = config::load_config(path);
  if (recorded.glue.init_identity.empty()) {  // written before runs recorded their model
    spdlog::warn("[glue] {} records no glue.init_identity: the --init model of this resume cannot be checked", path);
    recorded.glue.init_identity = requested.glue.init_identity;
  }
  train::check_resume_settings(recorded, requested, path, glue_keys_allowed_to_change_on_resume());
}

}  // namespace tisa::glue
