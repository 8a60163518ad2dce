// Training checkpoints on disk (SPEC §4): one folder per step, <run>/checkpoints/step-000100/,
// written atomically and sealed by a manifest so that a crash or a damaged disk never makes resume
// load a half-written or corrupted checkpoint.
//
// Writing: the payload (model.safetensors + config.json, optimizer.safetensors,
// training_state.json — produced by the caller's callback) goes into a hidden temporary folder
// next to the final one; every file is fsynced, then manifest.json (size + FNV-1a hash of every
// file) is written last, and the folder is renamed into place. A folder without a manifest, or one
// whose files do not match it, is refused with an error naming the file and what differs.
//
// This file knows nothing about models or optimisers: what goes into a checkpoint is the caller's
// business (train/pretrainer.cpp); retention (keep the last K plus the best) is decided here.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tisa::train {

inline constexpr const char* kManifestFile = "manifest.json";
inline constexpr const char* kTrainingStateFile = "training_state.json";
inline constexpr const char* kOptimizerFile = "optimizer.safetensors";

struct CheckpointInfo {
  std::string path;  // <run>/checkpoints/step-000100
  int64_t step = 0;
};

// Throws tisa::Error when `checkpoint_dir` is incomplete or corrupt: a missing manifest, a listed
// file that is missing, has another size (truncated) or another content hash (bit flips).
void verify_checkpoint(const std::string& checkpoint_dir);

class CheckpointStore {
 public:
  // `dir` is the folder holding the step-* folders (created when missing).
  explicit CheckpointStore(std::string dir);

  const std::string& dir() const { return dir_; }

  // Folder name of a step: "step-000100" (at least 6 digits).
  static std::string folder_name(int64_t step);

  // Writes the checkpoint of `step`: `write_payload(tmp_dir)` writes the files into a fresh
  // temporary folder; then the manifest is added and the folder renamed to step-XXXXXX (an
  // existing checkpoint of the same step is replaced). Returns the final path.
  std::string save(int64_t step, const std::function<void(const std::string& tmp_dir)>& write_payload);

  // All step-* folders (valid or not), sorted by increasing step.
  std::vector<CheckpointInfo> list() const;

  // The newest checkpoint that verifies; each newer corrupt one is reported with a warning naming
  // the problem and skipped. nullopt when there is none.
  std::optional<CheckpointInfo> latest_valid() const;

  // Deletes checkpoints except the newest `keep_last` ones and `keep_step` (the best one).
  // keep_last <= 0 keeps all. Also removes leftover temporary folders of interrupted saves.
  void prune(int64_t keep_last, std::optional<int64_t> keep_step) const;

 private:
  std::string dir_;
};

}  // namespace tisa::train
