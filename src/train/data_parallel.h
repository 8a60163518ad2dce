// Data parallelism in the pretraining run (distributed.h does the communication): the global
// batch rule across world sizes, the checkpoint record that lets a resume keep the global batch,
// and the reductions of per-update results and evaluation results over ranks (used by both
// training loops: pretraining and GLUE).
//
// Global batch = training.batch_size (per process, per micro-batch) × accumulation × world size.
// Accumulation per update is, in this order:
//   1. training.global_batch / (batch_size × world size) when training.global_batch > 0;
//   2. on resume, the global batch recorded in the checkpoint (data_parallel.json) divided by
//      batch_size × world size, when the world size or batch size changed;
//   3. training.accumulation.
// Cases 1 and 2 must divide exactly (tisa::Error otherwise, naming the numbers).
#pragma once
#include <cstdint>
#include <string>

#include "config/config.h"
#include "train/pretrain_step.h"
#include "train/update_step.h"

namespace tisa::train {

class Distributed;

inline constexpr const char* kDataParallelFile = "data_parallel.json";

// What a checkpoint records about how its global batch was formed.
struct DataParallelRecord {
  int64_t world_size = 1;
  int64_t batch_size = 0;
  int64_t accumulation = 1;
  int64_t global_batch() const { return world_size * batch_size * accumulation; }
};
void write_data_parallel_record(const std::string& checkpoint_dir, const DataParallelRecord& record);
// nullopt-like: world_size 0 when the checkpoint has no record (written before this file existed).
DataParallelRecord read_data_parallel_record(const std::string& checkpoint_dir);

// Accumulation per update by the rule above; `resume_dir` empty when not resuming.
int64_t resolve_accumulation(const config::TrainingConfig& t, int world_size, const std::string& resume_dir);

// Sums the loss, the terms (each rank holds its share of the update's means, update_step.h) and
// the tokens over ranks (grad_norm is the same on every rank after the all-reduce), and returns
// true when any rank requested a stop. One collective; both training loops call it.
bool reduce_update_result(Distributed& dist, UpdateResult& result, bool stop_requested);

// Combines the per-rank evaluation of disjoint shards: sums of losses (mean × count), correct
// predictions and counts over ranks.
EvalResult reduce_eval_result(Distributed& dist, const EvalResult& local);

}  // namespace tisa::train
