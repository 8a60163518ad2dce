// Batches of pretraining examples for the trainer: background worker threads, a bounded prefetch
// queue, exact resume from a data position and sharding over ranks. Torch-free: a batch is plain
// int64 vectors plus a shape; the trainer turns them into tensors.
//
// Data position (epoch, index): `index` counts global example slots of the epoch already consumed
// by all ranks together; rank r of world_size reads slots index + r, index + r + world_size, ...
// Each batch advances index by batch_size·world_size, so all ranks share one position, and a
// checkpoint stores a single one. An epoch has floor(N / world_size)·world_size usable slots
// (N = ExampleBuilder::num_examples(epoch)); the tail is skipped so ranks stay in step. When
// looping, a batch that reaches the end of an epoch continues with slot 0 of the next one.
// Batch contents depend only on the position and the options, never on the worker count.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/pretrain_examples.h"

namespace tisa::data {

struct DataPosition {
  int64_t epoch = 0;
  int64_t index = 0;
  nlohmann::json to_json() const { return {{"epoch", epoch}, {"index", index}}; }
  static DataPosition from_json(const nlohmann::json& j);  // throws tisa::Error on bad content
  bool operator==(const DataPosition& o) const { return epoch == o.epoch && index == o.index; }
  bool operator!=(const DataPosition& o) const { return !(*this == o); }
};

// A padded batch, row-major [batch_size, seq_len].
struct PretrainBatch {
  int64_t batch_size = 0;
  int64_t seq_len = 0;
  std::vector<int64_t> input_ids;       // [B, L], pad id beyond each example's length
  std::vector<int64_t> token_type_ids;  // [B, L], 0 on padding
  std::vector<int64_t> attention_mask;  // [B, L], 1 on tokens, 0 on padding
  std::vector<int64_t> lengths;         // [B]
  std::vector<int64_t> masked_positions;  // [M] flat indices into B·L, ascending
  std::vector<int64_t> masked_labels;     // [M] original ids
  std::vector<int64_t> sop_labels;        // [B] 1 = swapped
  int64_t num_tokens = 0;                 // sum of lengths
  DataPosition position;                  // position of this batch (its first slot)
  DataPosition next_position;             // position after it
};

struct LoaderOptions {
  int64_t batch_size = 32;     // examples per rank per batch
  int64_t workers = 1;         // background threads; 0 = build in the calling thread
  int64_t prefetch_batches = 8;
  int64_t rank = 0;
  int64_t world_size = 1;
  bool loop = true;            // false: stop at the end of the starting epoch (evaluation)
  bool pad_to_max_length = false;  // false: pad to the longest example in the batch
};

// Pads examples into a batch (also usable without the loader).
PretrainBatch collate(const std::vector<PretrainExample>& examples, int32_t pad_id, int64_t pad_to = 0);

class PretrainBatchLoader {
 public:
  PretrainBatchLoader(std::shared_ptr<const ExampleBuilder> builder, LoaderOptions options,
                      DataPosition start = {});
  ~PretrainBatchLoader();
  PretrainBatchLoader(const PretrainBatchLoader&) = delete;
  PretrainBatchLoader& operator=(const PretrainBatchLoader&) = delete;

  // The next batch; false when not looping and the epoch is exhausted. Rethrows a worker's error.
  bool next(PretrainBatch& batch);
  // Position of the next batch next() returns (store it in the checkpoint).
  DataPosition position() const;
  // Restarts from `position` (drops prefetched batches).
  void seek(DataPosition position);

  const ExampleBuilder& builder() const { return *builder_; }
  const LoaderOptions& options() const { return options_; }

 private:
  struct Job {
    DataPosition start, end;
    std::vector<std::pair<int64_t, int64_t>> slots;  // (epoch, example index) for this rank
  };
  std::shared_ptr<const ExampleBuilder> builder_;
  LoaderOptions options_;
  int32_t pad_id_;

  mutable std::mutex mutex_;
  std::condition_variable cv_work_, cv_done_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
  DataPosition consumer_pos_;        // next batch to hand out
  DataPosition assign_pos_;          // start of the next batch to plan
  bool assign_exhausted_ = false;
  int64_t next_assign_seq_ = 0, next_consume_seq_ = 0;
  std::map<int64_t, PretrainBatch> ready_;
  std::exception_ptr error_;

  bool plan_job(Job& job);  // under mutex_; false when no more data
  PretrainBatch run_job(const Job& job) const;
  void start_workers();
  void stop_workers();
  void worker_loop();
};

}  // namespace tisa::data
