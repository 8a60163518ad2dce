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

bool is_training_time_model_key(const std::string& key) {
  return key == "model.hidden_dropout_prob" || key == "model.attention_probs_dropout_prob" ||
         key == "model.classifier_dropout_prob" || key == "model.initializer_range" ||
         key.rfind("model.position.tisa.init_", 0) == 0;
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
