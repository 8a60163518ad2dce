// One pretraining update and the evaluation pass; see pretrain_step.h.
#include "train/pretrain_step.h"

#include "common/error.h"
#include "data/counter_rng.h"
#include "model/autocast.h"
#include "optim/grad_utils.h"
#include "train/device_copy.h"
#include "train/fused_cross_entropy.h"
#include "train/distributed.h"
#include "train/precision_choice.h"

namespace tisa::train {
namespace {

torch::Tensor to_tensor(const std::vector<int64_t>& values, std::vector<int64_t> shape, const torch::Device& device) {
  auto t = torch::from_blob(const_cast<int64_t*>(values.data()), shape, torch::kLong);
  // from_blob does not own the memory: copy (a CPU clone, or through pinned memory to the GPU).
  return device.is_cpu() ? t.clone() : host_to_device(t, device);
}

}  // namespace

torch::Tensor count_top1_hits(const torch::Tensor& logits, const torch::Tensor& labels) {
  // On a GPU argmax is cheap, and selecting rows below would synchronise with the host.
  if (!logits.device().is_cpu() || logits.size(0) == 0) return logits.argmax(-1).eq(labels).sum();
  // A row can only hit where the label's logit is the row's maximum; argmax (the first index of
  // the maximum, so ties count as argmax counts them) runs on those rows alone — about as many as
  // the accuracy says, a third of the rows at the cpu scale's 30 %.
  const auto row_max = logits.amax(-1);                                                  // [N]
  const auto candidates = logits.gather(-1, labels.unsqueeze(-1)).squeeze(-1).eq(row_max).nonzero().squeeze(-1);
  if (candidates.numel() == 0) return torch::zeros({}, labels.options());
  return logits.index_select(0, candidates).argmax(-1).eq(labels.index_select(0, candidates)).sum();
}

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

std::vector<int64_t> draw_position_offsets(uint64_t seed, int64_t update, int64_t rank, int64_t micro_batch,
                                           int64_t batch_size, int64_t length, int64_t span) {
  TISA_CHECK(span >= length && length >= 1,
             "position span " + std::to_string(span) + " must be >= the sequence length " + std::to_string(length));
  constexpr uint64_t kPositionStream = 0x706f736974696f6eULL;  // "position": apart from the data streams
  data::CounterRng rng({seed, kPositionStream, static_cast<uint64_t>(update), static_cast<uint64_t>(rank),
                        static_cast<uint64_t>(micro_batch)});
  std::vector<int64_t> offsets(static_cast<size_t>(batch_size));
  for (auto& o : offsets) o = static_cast<int64_t>(rng.below(static_cast<uint64_t>(span - length + 1)));
  return offsets;
}

PretrainLosses pretraining_losses(model::AlbertForPreTraining& model, const DeviceBatch& b,
                                  const torch::Tensor& position_offsets, bool sparse_final_layer) {
  namespace F = torch::nn::functional;
  model::ForwardOptions options;
  options.position_offsets = position_offsets;
  options.head_outputs_only = sparse_final_layer;
  auto out = model->forward(b.input_ids, b.token_type_ids, b.attention_mask, b.masked_positions, options);
  auto mlm_logits = out.prediction_logits.reshape({-1, out.prediction_logits.size(-1)});  // [M, V]
  auto sop_logits = out.sop_logits.reshape({-1, 2}).to(torch::kFloat);                    // [B, 2]
  const auto sum = F::CrossEntropyFuncOptions().reduction(torch::kSum);
  PretrainLosses l;
  if (fused_cross_entropy_applies(mlm_logits)) {
    // bf16 or float32 logits on the CPU: one pass each way over them, hits counted in the same pass.
    const CrossEntropySum mlm = fused_cross_entropy_sum(mlm_logits, b.masked_labels);
    l.mlm_sum = mlm.loss_sum;
    l.mlm_correct = mlm.hits;
  } else {
    mlm_logits = mlm_logits.to(torch::kFloat);
    l.mlm_sum = F::cross_entropy(mlm_logits, b.masked_labels, sum);  // Σ over the M masked positions
    // Counted on the f32 copy the loss already made: the same maxima (bf16 -> f32 is exact), and
    // LibTorch 1.13's CPU argmax is scalar code, slowest over bf16; count_top1_hits runs it on the
    // rows that can hit only (docs/perf/README.md, "Accuracy count in the pretraining step").
    l.mlm_correct = count_top1_hits(mlm_logits, b.masked_labels);
  }
  l.sop_sum = F::cross_entropy(sop_logits, b.sop_labels, sum);     // Σ over the B examples
  l.mlm = l.mlm_sum / static_cast<double>(b.masked_labels.size(0));  // NaN without masked positions, as a mean is
  l.sop = l.sop_sum / static_cast<double>(b.sop_labels.size(0));
  l.total = l.mlm + l.sop;
  l.sop_correct = count_top1_hits(sop_logits, b.sop_labels);
  return l;
}

PretrainStep::PretrainStep(model::AlbertForPreTraining model, optim::Optimizer& optimizer,
                           const optim::LrSchedule& schedule, double clip_norm, torch::Device device,
                           config::Precision precision)
    : model_(std::move(model)), update_(optimizer, schedule, clip_norm), device_(device), precision_(precision) {}

UpdateResult PretrainStep::operator()(const std::vector<data::PretrainBatch>& micro_batches, int64_t updates_done) {
  TISA_CHECK(!micro_batches.empty(), "PretrainStep needs at least one micro-batch");
  std::vector<std::vector<double>> counts;  // per micro-batch: {masked tokens, examples} (kMlmTerm, kSopTerm)
  for (const auto& mb : micro_batches)
    counts.push_back({static_cast<double>(mb.masked_labels.size()), static_cast<double>(mb.batch_size)});
  auto forward = [&](size_t i) {
    DeviceBatch batch = to_device(micro_batches[i], device_);
    torch::Tensor offsets;
    if (position_span > 0) {
      const auto& mb = micro_batches[i];
      const auto drawn = draw_position_offsets(position_seed, updates_done, dist ? dist->rank() : 0,
                                               static_cast<int64_t>(i), mb.batch_size, mb.seq_len, position_span);
      offsets = torch::tensor(drawn, torch::kLong);  // on the host: the model checks the range there
    }
    model::AutocastScope autocast(device_, uses_bf16(precision_));
    PretrainLosses losses = pretraining_losses(model_, batch, offsets, sparse_final_layer);
    return std::vector<torch::Tensor>{losses.mlm_sum, losses.sop_sum};
  };
  update_.dist = dist;
  update_.reducer = reducer;
  update_.loss_hook = loss_hook;
  model_->train();
  UpdateResult r = update_(counts, forward, updates_done);
  for (const auto& mb : micro_batches) r.tokens += mb.num_tokens;
  return r;
}

EvalResult evaluate(model::AlbertForPreTraining& model, data::PretrainBatchLoader& loader, int64_t max_batches,
                    const torch::Device& device, config::Precision precision) {
  const bool was_training = model->is_training();
  model->eval();
  torch::NoGradGuard no_grad;
  model::AutocastScope autocast(device, uses_bf16(precision));
  torch::Tensor mlm_sum = torch::zeros({}, torch::TensorOptions().device(device).dtype(torch::kDouble));
  torch::Tensor sop_sum = mlm_sum.clone(), mlm_correct = mlm_sum.clone(), sop_correct = mlm_sum.clone();
  EvalResult r;
  data::PretrainBatch host;
  while ((max_batches <= 0 || r.batches < max_batches) && loader.next(host)) {
    DeviceBatch b = to_device(host, device);
    PretrainLosses l = pretraining_losses(model, b);
    const int64_t m = b.masked_labels.size(0), n = b.sop_labels.size(0);
    mlm_sum += l.mlm_sum.to(torch::kDouble);
    sop_sum += l.sop_sum.to(torch::kDouble);
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
