// `pretrain --dump-batches DIR`: what a peer trainer needs to repeat a run update for update
// (issue 31: the training-path peer, tests/hf/train_peer.py). DIR holds
//   dump.json                  format, settings of the run (optimiser, schedule, clipping, steps)
//   initial/                   the weights before the first update (HF layout, save_hf_model)
//   update-NNNNNN.safetensors  the batch of update N (1-based): input_ids, token_type_ids,
//                              attention_mask [B, L], labels [B, L] (original id at masked
//                              positions, -100 elsewhere, HF's convention), sentence_order_label [B]
//   updates.jsonl              one line per update: loss, mlm_loss, sop_loss, grad_norm, lr, applied
// One micro-batch per update and one process only, so that each file is exactly one optimiser step.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <string>

#include "config/config.h"
#include "data/pretrain_loader.h"

namespace torch::nn {
class Module;
}

namespace tisa::train {

struct UpdateResult;

// A batch in HF's tensor names and conventions (the dump's update files).
std::map<std::string, at::Tensor> hf_batch_tensors(const data::PretrainBatch& batch);

class BatchDump {
 public:
  // Creates `dir`, which must not exist yet (a dump never replaces another's files). Refuses
  // settings a dump cannot describe: accumulation > 1 or several processes.
  BatchDump(std::string dir, const config::Config& cfg, int64_t accumulation, int64_t world_size);

  // The weights before the first update.
  void write_initial(torch::nn::Module& model, const config::ModelConfig& model_cfg) const;
  // Update `update` (1-based): its batch and what the step reported.
  void write_update(int64_t update, const data::PretrainBatch& batch, const UpdateResult& result) const;

  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

}  // namespace tisa::train
