// Checkpoint-versus-config architecture check; see architecture_check.h.
#include "train/architecture_check.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "config/config_loader.h"

namespace tisa::train {
std::vector<std::string> keys_allowed_to_change_on_resume() {
  // How long and how often, where it runs and with how many threads; the batch split (the global
  // batch is kept by data_parallel.h's rule). GLUE settings do not concern pretraining.
  return {"training.steps",           "training.eval_interval",  "training.eval_batches",
          "training.checkpoint_interval", "training.keep_checkpoints", "training.log_interval",
          "training.max_bad_steps",   "training.threads",        "training.device",
          "training.batch_size",      "training.accumulation",   "training.global_batch",
          "training.deterministic",   "data.workers",            "data.prefetch_batches",
          // the data may move: data.dataset_identity (its content) may not
          "data.dataset",             "glue.*"};
}

namespace {

// Keys of `run_config` and `requested` that differ, outside `may_change` and `skipped_prefix`.
void check_settings_kept(const config::Config& run_config, const config::Config& requested,
                         const std::string& run_config_path, const std::vector<std::string>& may_change,
                         const std::string& skipped_prefix) {
  const auto before = config::flatten_config(run_config), after = config::flatten_config(requested);
  TISA_CHECK(before.size() == after.size(), "config flattening differs in size");
  auto is_allowed = [&](const std::string& key) {
    if (!skipped_prefix.empty() && key.rfind(skipped_prefix, 0) == 0) return true;
    for (const auto& k : may_change)
      if (k == key || (k.back() == '*' && key.rfind(k.substr(0, k.size() - 1), 0) == 0)) return true;
    return false;
  };
  std::string problems;
  for (size_t i = 0; i < before.size(); ++i) {
    const auto& [key, old_value] = before[i];
    if (old_value == after[i].second || is_allowed(key)) continue;
    problems += "\n  " + key + ": the run has " + old_value + ", now " + after[i].second;
  }
  if (problems.empty()) return;
  std::string keys;
  for (const auto& k : may_change) keys += (keys.empty() ? "" : ", ") + k;
  throw Error("--resume continues the run of " + run_config_path + ", but these settings would change it:" + problems +
              "\nhint: drop these --set/--config changes to resume, or start a new run in another --run-dir; "
              "settings that may change on resume: " + keys);
}

}  // namespace

void check_resume_settings(const config::Config& run_config, const config::Config& requested,
                           const std::string& run_config_path) {
  // model.* keys: reconcile_model_config() checks these against the checkpoint.
  check_settings_kept(run_config, requested, run_config_path, keys_allowed_to_change_on_resume(), "model.");
}

void check_resume_settings(const config::Config& run_config, const config::Config& requested,
                           const std::string& run_config_path, const std::vector<std::string>& may_change) {
  check_settings_kept(run_config, requested, run_config_path, may_change, "");
}

bool is_training_time_model_key(const std::string& key) {
  return key == "model.hidden_dropout_prob" || key == "model.attention_probs_dropout_prob" ||
         key == "model.classifier_dropout_prob" || key == "model.initializer_range" ||
         // any scheme's initialisation settings (model.position.<scheme>.init_*): weights come from the checkpoint
         (key.rfind("model.position.", 0) == 0 && key.find(".init_") != std::string::npos);
}

config::ModelConfig reconcile_model_config(const config::ModelConfig& checkpoint, const config::ModelConfig& requested,
                                           const std::string& checkpoint_source) {
  const auto have = config::flatten_model_config(checkpoint);
  const auto want = config::flatten_model_config(requested);
  TISA_CHECK(have.size() == want.size(), "model config flattening differs in size");
  std::string problems;
  for (size_t i = 0; i < have.size(); ++i) {
    if (have[i].second == want[i].second || is_training_time_model_key(have[i].first)) continue;
    problems += "\n  " + have[i].first + ": the checkpoint " + checkpoint_source + " has " + have[i].second +
                ", the config says " + want[i].second;
  }
  if (!problems.empty())
    throw Error("the model architecture comes from the checkpoint, but the config differs:" + problems +
                "\nhint: remove these keys (or their --set overrides) to continue this run, or start a new run "
                "with a fresh --run-dir");
  // The checkpoint's config with the requested training-time values, key by key through the JSON
  // form (any scheme's init_* settings included, without naming the schemes).
  nlohmann::json out = config::model_config_to_json(checkpoint);
  const nlohmann::json wanted = config::model_config_to_json(requested);
  for (const auto& [key, value] : want) {
    if (!is_training_time_model_key(key)) continue;
    std::string pointer = key.substr(std::string("model").size());  // ".position.tisa.init_offset_std"
    std::replace(pointer.begin(), pointer.end(), '.', '/');
    out[nlohmann::json::json_pointer(pointer)] = wanted[nlohmann::json::json_pointer(pointer)];
  }
  return config::model_config_from_json(out, checkpoint_source);
}

}  // namespace tisa::train
