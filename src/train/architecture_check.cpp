// Checkpoint-versus-config architecture check; see architecture_check.h.
#include "train/architecture_check.h"

#include <sstream>
#include <type_traits>

#include "common/error.h"

namespace tisa::train {
namespace {

// A config visitor (config.h's visit() protocol) that prints every field with its key path.
class Flattener {
 public:
  explicit Flattener(std::string prefix) : prefix_(std::move(prefix)) {}

  template <class T>
  void field(const char* key, const T& value, const char* /*help*/) {
    std::ostringstream s;
    if constexpr (std::is_same_v<T, bool>) s << (value ? "true" : "false");
    else if constexpr (std::is_floating_point_v<T>) s.precision(17), s << value;
    else s << value;
    out.emplace_back(prefix_ + key, s.str());
  }
  template <class E, class Table>
  void choice(const char* key, const E& value, const Table& table, const char* /*help*/) {
    std::string name = "?";
    for (const auto& [n, v] : table)
      if (v == value) name = n;
    out.emplace_back(prefix_ + key, name);
  }
  template <class S>
  void section(const char* key, S& sub, const char* /*help*/) {
    Flattener inner(prefix_ + key + ".");
    sub.visit(inner);
    out.insert(out.end(), inner.out.begin(), inner.out.end());
  }

  std::vector<std::pair<std::string, std::string>> out;

 private:
  std::string prefix_;
};

}  // namespace

std::vector<std::pair<std::string, std::string>> flatten_model_config(const config::ModelConfig& model) {
  Flattener f("model.");
  config::ModelConfig copy = model;  // visit() is non-const; the Flattener only reads
  copy.visit(f);
  return f.out;
}

std::vector<std::string> keys_allowed_to_change_on_resume() {
  // How long and how often, where it runs and with how many threads; the batch split (the global
  // batch is kept by data_parallel.h's rule). GLUE settings do not concern pretraining.
  return {"training.steps",           "training.eval_interval",  "training.eval_batches",
          "training.checkpoint_interval", "training.keep_checkpoints", "training.log_interval",
          "training.max_bad_steps",   "training.threads",        "training.device",
          "training.batch_size",      "training.accumulation",   "training.global_batch",
          "training.deterministic",   "data.workers",            "data.prefetch_batches",
          "glue.*"};
}

void check_resume_settings(const config::Config& run_config, const config::Config& requested,
                           const std::string& run_config_path) {
  Flattener before(""), after("");
  config::Config a = run_config, b = requested;  // visit() is non-const
  a.visit(before);
  b.visit(after);
  TISA_CHECK(before.out.size() == after.out.size(), "config flattening differs in size");
  const auto allowed = keys_allowed_to_change_on_resume();
  auto is_allowed = [&](const std::string& key) {
    if (key.rfind("model.", 0) == 0) return true;  // reconcile_model_config() checks these
    for (const auto& k : allowed)
      if (k == key || (k.back() == '*' && key.rfind(k.substr(0, k.size() - 1), 0) == 0)) return true;
    return false;
  };
  std::string problems;
  for (size_t i = 0; i < before.out.size(); ++i) {
    const auto& [key, old_value] = before.out[i];
    if (old_value == after.out[i].second || is_allowed(key)) continue;
    problems += "\n  " + key + ": the run has " + old_value + ", now " + after.out[i].second;
  }
  if (problems.empty()) return;
  std::string keys;
  for (const auto& k : allowed) keys += (keys.empty() ? "" : ", ") + k;
  throw Error("--resume continues the run of " + run_config_path + ", but these settings would change it:" + problems +
              "\nhint: drop these --set/--config changes to resume, or start a new run in another --run-dir; "
              "settings that may change on resume: " + keys);
}

bool is_training_time_model_key(const std::string& key) {
  return key == "model.hidden_dropout_prob" || key == "model.attention_probs_dropout_prob" ||
         key == "model.classifier_dropout_prob" || key == "model.initializer_range" ||
         // any scheme's initialisation settings (model.position.<scheme>.init_*): weights come from the checkpoint
         (key.rfind("model.position.", 0) == 0 && key.find(".init_") != std::string::npos);
}

config::ModelConfig reconcile_model_config(const config::ModelConfig& checkpoint, const config::ModelConfig& requested,
                                           const std::string& checkpoint_source) {
  auto have = flatten_model_config(checkpoint);
  auto want = flatten_model_config(requested);
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
  config::ModelConfig out = checkpoint;
  out.hidden_dropout_prob = requested.hidden_dropout_prob;
  out.attention_probs_dropout_prob = requested.attention_probs_dropout_prob;
  out.classifier_dropout_prob = requested.classifier_dropout_prob;
  out.initializer_range = requested.initializer_range;
  out.position.tisa.init_offset_std = requested.position.tisa.init_offset_std;
  out.position.tisa.init_amplitude_mean = requested.position.tisa.init_amplitude_mean;
  out.position.tisa.init_amplitude_std = requested.position.tisa.init_amplitude_std;
  out.position.tisa.init_sharpness_mean = requested.position.tisa.init_sharpness_mean;
  out.position.tisa.init_sharpness_std = requested.position.tisa.init_sharpness_std;
  return out;
}

}  // namespace tisa::train
