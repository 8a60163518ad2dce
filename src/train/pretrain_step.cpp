// One pretraining update and the evaluation pass; see pretrain_step.h.
#include "train/pretrain_step.h"

#include "common/error.h"
#include "model/autocast.h"
#include "optim/grad_utils.h"
#include "train/device_copy.h"
#include "train/distributed.h"

namespace tisa::train {
namespace {

torch::Tensor to_tensor(const std::vector<int64_t>& values, std::vector<int64_t> shape, const torch::Device& device) {
  auto t = torch::from_blob(const_cast<int64_t*>(values.data()), shape, torch::kLong);
  // from_blob does not own the memory: copy (a CPU clone, or through pinned memory to the GPU).
  return device.is_cpu() ? t.clone() : host_to_device(t, device);
}

}  // namespace

DeviceBatch to_device(const data::PretrainBatch& b, const torch::Device& device) {
  DeviceBatch d;
  const int64_t m = static_cast<int64_t>(b.masked_positions.size());
  d.input_ids = to_tensor(b.input_ids, {b.batch_size, b.seq_len}, device);
  d.token_type_ids = to_tensor(b.token_type_ids, {b.batch_size, b.seq_len}, device);
  d.attention_mask = to_tensor(b.attention_mask, {b.batch_size, b.seq_len}, device);
  d.masked_positions = to_tensor(b.masked_positions, {m}, device);
  d.masked_labels = to_tensor(b.masked_labels, {m}, device);
  d.sop_labels = to_tensor(b.sop_labels, {b.batch_size}, device);
  d.num_tokens = b.num_tokens;
  return d;
}

PretrainLosses pretraining_losses(model::AlbertForPreTraining& model, const DeviceBatch& b) {
  auto out = model->forward(b.input_ids, b.token_type_ids, b.attention_mask, b.masked_positions);
  PretrainLosses l;
  l.mlm = model::mlm_loss(out.prediction_logits, b.masked_labels);  // mean over the M masked positions
  l.sop = model::sop_loss(out.sop_logits, b.sop_labels);            // mean over the B examples
  l.total = l.mlm + l.sop;
  l.mlm_correct = out.prediction_logits.argmax(-1).eq(b.masked_labels).sum();
  l.sop_correct = out.sop_logits.argmax(-1).eq(b.sop_labels).sum();
  return l;
}

PretrainStep::PretrainStep(model::AlbertForPreTraining model, optim::Optimizer& optimizer,
                           const optim::LrSchedule& schedule, double clip_norm, torch::Device device,
                           config::Precision precision)
    : model_(std::move(model)),
      optimizer_(optimizer),
      schedule_(schedule),
      clip_norm_(clip_norm),
      device_(device),
      precision_(precision) {}

StepResult PretrainStep::operator()(const std::vector<data::PretrainBatch>& micro_batches, int64_t updates_done) {
  TISA_CHECK(!micro_batches.empty(), "PretrainStep needs at least one micro-batch");
  StepResult r;
  const double scale = 1.0 / static_cast<double>(micro_batches.size());
  torch::Tensor loss_sum = torch::zeros({}, torch::TensorOptions().device(device_));
  torch::Tensor mlm_sum = loss_sum.clone(), sop_sum = loss_sum.clone();
  model_->train();
  optimizer_.zero_grad();
  for (const auto& mb : micro_batches) {
    DeviceBatch batch = to_device(mb, device_);
    PretrainLosses losses;
    {
      model::AutocastScope autocast(device_, precision_ == config::Precision::kBf16);
      losses = pretraining_losses(model_, batch);
    }
    torch::Tensor loss = losses.total;
    if (loss_hook) loss_hook(updates_done, loss);
    if (reducer) reducer->arm(&mb == &micro_batches.back());  // [dist] all-reduce during the last backward
    (loss * scale).backward();  // accumulate the gradient of the mean over micro-batches
    loss_sum += loss.detach();
    mlm_sum += losses.mlm.detach();
    sop_sum += losses.sop.detach();
    r.tokens += mb.num_tokens;
  }
  if (reducer) reducer->reduce();  // [dist] averaged gradients before clipping and LAMB's trust ratios
  torch::Tensor grad_norm = optimizer_.clip_grad_norm(clip_norm_);  // measures, and clips when > 0
  r.loss = loss_sum.item<double>() * scale;  // the one host sync of the update
  r.mlm_loss = mlm_sum.item<double>() * scale;
  r.sop_loss = sop_sum.item<double>() * scale;
  r.grad_norm = grad_norm.item<double>();
  r.lr = schedule_.lr_at(updates_done);
  // A NaN/Inf loss or gradient would poison the weights and the moments: skip the update.
  r.applied = std::isfinite(r.loss) && std::isfinite(r.grad_norm);
  if (r.applied) optimizer_.step(r.lr);
  optimizer_.zero_grad();  // free the gradients as soon as they are used
  return r;
}

EvalResult evaluate(model::AlbertForPreTraining& model, data::PretrainBatchLoader& loader, int64_t max_batches,
                    const torch::Device& device, config::Precision precision) {
  const bool was_training = model->is_training();
  model->eval();
  torch::NoGradGuard no_grad;
  model::AutocastScope autocast(device, precision == config::Precision::kBf16);
  torch::Tensor mlm_sum = torch::zeros({}, torch::TensorOptions().device(device).dtype(torch::kDouble));
  torch::Tensor sop_sum = mlm_sum.clone(), mlm_correct = mlm_sum.clone(), sop_correct = mlm_sum.clone();
  EvalResult r;
  data::PretrainBatch host;
  while ((max_batches <= 0 || r.batches < max_batches) && loader.next(host)) {
    DeviceBatch b = to_device(host, device);
    PretrainLosses l = pretraining_losses(model, b);
    const int64_t m = b.masked_labels.size(0), n = b.sop_labels.size(0);
    mlm_sum += l.mlm.to(torch::kDouble) * static_cast<double>(m);  // mean · count = sum
    sop_sum += l.sop.to(torch::kDouble) * static_cast<double>(n);
    mlm_correct += l.mlm_correct.to(torch::kDouble);
    sop_correct += l.sop_correct.to(torch::kDouble);
    r.predictions += m;
    r.examples += n;
    ++r.batches;
  }
  if (r.predictions > 0) {
    r.mlm_loss = mlm_sum.item<double>() / static_cast<double>(r.predictions);
    r.mlm_accuracy = mlm_correct.item<double>() / static_cast<double>(r.predictions);
  }
  if (r.examples > 0) {
    r.sop_loss = sop_sum.item<double>() / static_cast<double>(r.examples);
    r.sop_accuracy = sop_correct.item<double>() / static_cast<double>(r.examples);
  }
  if (was_training) model->train();
  return r;
}

}  // namespace tisa::train
