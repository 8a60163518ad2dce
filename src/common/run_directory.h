// Ownership of run directories: the one place that decides whether a process may write a run into
// a folder. Used by `pretrain` (train/pretrainer.cpp) and `glue` (glue/glue_runner.cpp).
//
// Rules (README, "What a run directory holds"):
//  - One process per run directory. A run holds an exclusive lock (flock) on <dir>/.lock for its
//    lifetime; a second process is refused with the owner's pid, host and start time. The kernel
//    drops the lock when the owner exits or is killed, so a lock left by a crash is stale by
//    construction: the next run takes it and says that it did.
//  - A fresh run never replaces a finished one. It starts only where its folder is missing or
//    empty; otherwise it is refused, naming what is there, --resume (where the command has it) and
//    --overwrite. --overwrite deletes what a run of that kind writes, and refuses when the folder
//    also holds files no run wrote (so a mistyped --run-dir cannot wipe a home folder).
//  - Default names never collide: create_unique_run_dir() creates the folder atomically (mkdir)
//    and adds "-2", "-3", ... when another run took the name in the same second.
// Torch-free.
#pragma once
#include <string>
#include <vector>

namespace tisa {

// What a run of one kind writes into its folder, for the messages and for --overwrite.
struct RunLayout {
  std::string kind;                  // "pretraining run", "GLUE run"
  std::vector<std::string> entries;  // names it writes; "seed-*" matches any name starting "seed-"
  std::string continue_hint;         // how to continue it instead, e.g. "continue it with --resume"
  // The entry that holds what continue_hint continues from ("checkpoints"): a run whose entry is
  // missing or empty stopped before it and cannot be continued ("": any run can).
  std::string progress_entry;
};

// <run>/: config.yaml, train.log, metrics.jsonl, checkpoints/, final/ (train/pretrainer.h).
const RunLayout& pretraining_run_layout();
// <run>/<TASK>/: data/, seed-<s>/, results.json (glue/glue_runner.h).
const RunLayout& glue_task_layout();

class RunDirectory {
 public:
  enum class Start {
    kNew,       // create the folder when missing
    kContinue,  // the folder must exist (--resume)
  };
  // Claims `path` for this process (see the file comment); throws tisa::Error when the folder is
  // missing (kContinue), cannot be created, or is owned by another live process. `option` is the
  // flag that named the folder, for the messages (`prepare pretrain` locks its --output too).
  RunDirectory(std::string path, Start start, std::string option = "--run-dir");
  ~RunDirectory();  // releases the lock
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;

  const std::string& path() const { return path_; }

  // Makes <path>/<sub> ("" = the folder itself) ready for a fresh run of `layout`: created when
  // missing; refused when not empty unless `overwrite`, which deletes the layout's entries first.
  void start_fresh(const std::string& sub, const RunLayout& layout, bool overwrite) const;

 private:
  std::string path_, option_;
  int lock_fd_ = -1;
};

// Creates <parent>/<stem>-<YYYYmmdd-HHMMSS> (or with a "-N" suffix when taken) and returns it.
std::string create_unique_run_dir(const std::string& parent, const std::string& stem);

}  // namespace tisa
