// The batch dump for peer trainers; see batch_dump.h.
#include "train/batch_dump.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/fs.h"
#include "config/config_loader.h"
#include "model/hf_checkpoint.h"
#include "model/tensor_io.h"
#include "optim/schedule.h"
#include "train/pretrain_step.h"

namespace tisa::train {

std::map<std::string, at::Tensor> hf_batch_tensors(const data::PretrainBatch& batch) {
  const auto i64 = torch::TensorOptions().dtype(torch::kInt64);
  const std::vector<int64_t> shape = {batch.batch_size, batch.seq_len};
  auto grid = [&](const std::vector<int64_t>& v) { return torch::tensor(v, i64).reshape(shape); };
  // HF's MLM labels: the original id where a token was chosen for prediction, -100 elsewhere.
  torch::Tensor labels = torch::full({batch.batch_size * batch.seq_len}, -100, i64);
  labels.index_put_({torch::tensor(batch.masked_positions, i64)}, torch::tensor(batch.masked_labels, i64));
  return {{"input_ids", grid(batch.input_ids)},
          {"token_type_ids", grid(batch.token_type_ids)},
          {"attention_mask", grid(batch.attention_mask)},
          {"labels", labels.reshape(shape)},
          {"sentence_order_label", torch::tensor(batch.sop_labels, i64)}};
}

BatchDump::BatchDump(std::string dir, const config::Config& cfg, int64_t accumulation, int64_t world_size)
    : dir_(std::move(dir)) {
  if (accumulation != 1 || world_size != 1)
    throw Error(fmt::format("--dump-batches {}: a dump holds one batch per update from one process, but this run has "
                            "{} micro-batches per update on {} processes (set training.accumulation=1 and run one "
                            "process)",
                            dir_, accumulation, world_size));
  if (cfg.training.position_span > 0)
    throw Error(fmt::format("--dump-batches {}: the dump does not hold the position offsets that training.position_span "
                            "= {} draws, so a peer could not replay the run (set training.position_span=0)",
                            dir_, cfg.training.position_span));
  if (fs::exists(dir_))
    throw Error("--dump-batches " + dir_ + ": the folder exists; a dump is written to a new folder (pick another path "
                "or delete it)");
  fs::create_directories(dir_);
  nlohmann::json info = {
      {"format", "tisa-train batch dump 1"},
      {"config", config::config_to_json(cfg)},
      {"warmup_steps", optim::resolve_warmup_steps(cfg.schedule, cfg.training.steps)},
      {"files", {{"initial", "initial/"}, {"updates", "update-NNNNNN.safetensors"}, {"log", "updates.jsonl"}}}};
  fs::write_file_atomic(dir_ + "/dump.json", info.dump(2) + "\n");
}

void BatchDump::write_initial(torch::nn::Module& model, const config::ModelConfig& model_cfg) const {
  model::save_hf_model(dir_ + "/initial", model, model_cfg, model::kPretrainingArchitecture);
}

void BatchDump::write_update(int64_t update, const data::PretrainBatch& batch, const UpdateResult& r) const {
  model::save_tensor_file(fmt::format("{}/update-{:06d}.safetensors", dir_, update), hf_batch_tensors(batch));
  const nlohmann::json line = {{"update", update},       {"applied", r.applied},     {"loss", r.loss},
                               {"mlm_loss", mlm_loss(r)}, {"sop_loss", sop_loss(r)},   {"grad_norm", r.grad_norm},
                               {"lr", r.lr},             {"tokens", r.tokens}};
  std::ofstream out(dir_ + "/updates.jsonl", std::ios::app);
  out << line.dump() << "\n";
  if (!out.flush()) throw Error("--dump-batches: cannot write " + dir_ + "/updates.jsonl");
}

}  // namespace tisa::train
