// What a training checkpoint needs besides weights and optimiser moments to continue exactly
// (SPEC §4, STYLE §8): the step, the data loader's position, the random-number generators, the
// best validation result so far and the NaN counter. Stored as readable JSON
// (training_state.json), like Marian's .progress.yml.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace tisa::train {

struct TrainingState {
  int64_t step = 0;                    // optimiser updates done
  int64_t tokens_seen = 0;             // non-padding input tokens consumed by training
  nlohmann::json data_position;        // the batch loader's position (opaque to this file)
  std::string torch_cpu_rng;           // hex of the default CPU generator's state
  std::string torch_cuda_rng;          // hex of the default CUDA generator's state ("" when unused)
  int64_t consecutive_bad_steps = 0;   // NaN/Inf losses in a row ending at `step`
  int64_t skipped_steps = 0;           // NaN/Inf updates skipped in total
  std::optional<double> last_eval_mlm_loss;  // validation MLM loss of the evaluation at `step`
  std::optional<double> best_eval_mlm_loss;  // lowest validation MLM loss so far ...
  int64_t best_step = -1;                    // ... and the checkpoint step that had it (-1: none)
  std::string schedule;                // schedule name, for the reader (lr is recomputed from step)
  double lr = 0.0;                     // learning rate used for the update of `step`
};

nlohmann::json to_json(const TrainingState& state);
// Throws tisa::Error naming `source` and the key on a missing or malformed entry.
TrainingState training_state_from_json(const nlohmann::json& j, const std::string& source);

void save_training_state(const TrainingState& state, const std::string& path);
TrainingState load_training_state(const std::string& path);

// Random-number generator states of LibTorch's default generators as hex strings, and back.
// `cuda` also captures/restores the default CUDA generator (device 0).
void capture_rng(TrainingState& state, bool cuda);
void restore_rng(const TrainingState& state, bool cuda);

}  // namespace tisa::train
