// "The architecture lives in the checkpoint" (STYLE §8): when a run resumes from a training
// checkpoint or starts from --init, the checkpoint's config.json decides the model's shape. A
// config or --set value that differs from it is an error naming the key, never silently ignored.
// Only training-time knobs (dropouts, initialisation ranges) may differ; the config's values are
// used for those.
#pragma once
#include <string>
#include <vector>

#include "config/config.h"

namespace tisa::train {

// True for keys that may differ between a checkpoint and the run's config (dropouts, init ranges).
bool is_training_time_model_key(const std::string& key);

// Returns the model config to use: `checkpoint` with the training-time keys of `requested`.
// Throws tisa::Error listing every architecture key whose value differs, e.g.
//   "model.hidden_size: the checkpoint runs/x/checkpoints/step-000100 has 256, the config says 512"
// followed by a hint on what to do.
config::ModelConfig reconcile_model_config(const config::ModelConfig& checkpoint, const config::ModelConfig& requested,
                                           const std::string& checkpoint_source);

// "Resume keeps its word": a resumed run continues the same training. Settings that change what
// is trained (optimizer.*, schedule.*, data.* except its threads, training.seed, precision, ...)
// must equal the run's own config.yaml; only these may change on resume (README, run directory):
std::vector<std::string> keys_allowed_to_change_on_resume();
// Throws tisa::Error listing every other key whose value differs between `run_config` (the run's
// config.yaml, `run_config_path`) and `requested`, with both values. Model keys are
// reconcile_model_config()'s business and skipped here.
void check_resume_settings(const config::Config& run_config, const config::Config& requested,
                           const std::string& run_config_path);
// The same check for another kind of run (GLUE fine-tuning, glue/glue_resume.h): every key of
// `requested` except those matching `may_change` ("a.b" exactly, "a.*" by prefix) must equal the
// record, model.* keys included.
void check_resume_settings(const config::Config& run_config, const config::Config& requested,
                           const std::string& run_config_path, const std::vector<std::string>& may_change);

}  // namespace tisa::train
