// The training skeleton shared by pretraining and GLUE; see run_context.h.
#include "train/run_context.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <cmath>

#include "common/error.h"
#include "model/tensor_io.h"
#include "train/distributed.h"
#include "train/runtime_info.h"
#include "train/tensorboard_run.h"

namespace tisa::train {

torch::Device training_device(const config::TrainingConfig& t) {
  if (t.device == config::Device::kCpu) return torch::kCPU;
  if (!torch::cuda::is_available())
    throw Error("training.device: cuda was requested but LibTorch sees no CUDA device "
                "(this build: " + runtime_info().torch_version + "); use --set training.device=cpu");
  return torch::Device(torch::kCUDA, 0);
}

RunContext::RunContext(std::string run_dir, const config::TrainingConfig& t, Distributed& dist, bool handle_signals,
                       int64_t workers)
    : run_dir_(std::move(run_dir)),
      dist_(dist),
      device_(rank_device(training_device(t))),  // [dist] cuda:LOCAL_RANK
      tensorboard_enabled_(t.tensorboard),
      metrics_(std::make_unique<MetricsWriter>()),  // disabled until open_metrics()
      checkpoints_(run_dir_ + "/checkpoints"),
      signals_(handle_signals) {
  if (dist_.is_main()) log_.emplace(run_dir_ + "/train.log");
  else spdlog::set_level(spdlog::level::warn);  // [dist] other ranks: warnings and errors only
  apply_thread_settings(t.threads, workers);
  at::globalContext().setDeterministicAlgorithms(t.deterministic, /*warn_only=*/true);
}

RunContext::~RunContext() = default;

bool RunContext::is_main() const { return dist_.is_main(); }

void RunContext::open_metrics(int64_t resume_step) {
  if (!dist_.is_main()) return;  // [dist] disabled on ranks > 0
  const std::string path = run_dir_ + "/metrics.jsonl";
  if (resume_step >= 0) MetricsWriter::drop_records_after(path, resume_step);
  if (tensorboard_enabled_ && tensorboard_run_)
    tensorboard_ = std::make_unique<TensorBoardRun>(
        run_dir_ + "/tensorboard", *tensorboard_run_, resume_step,
        resume_step >= 0 ? MetricsWriter::read_records(path) : std::vector<MetricsRecord>{});
  metrics_ = std::make_unique<MetricsWriter>(path);
  metrics_->set_sink(tensorboard_.get());
}

void RunContext::describe_run(const TensorBoardRunInfo& run) {
  tensorboard_run_ = std::make_unique<TensorBoardRunInfo>(run);
}

void RunContext::write_final_metrics(int64_t step, const nlohmann::json& values) {
  metrics_->write("final", step, values);
  if (tensorboard_) tensorboard_->end_session(step);
}

CheckpointInfo RunContext::resume_point(const std::string& hint) const {
  auto latest = checkpoints_.latest_valid();
  if (!latest) throw Error("--resume: no valid checkpoint in " + checkpoints_.dir() + " (hint: " + hint + ")");
  return *latest;
}

void RunContext::count_update(TrainingState& s, bool applied, double loss, double grad_norm, int64_t max_bad_steps,
                              const std::string& stage) {
  if (applied) {
    s.consecutive_bad_steps = 0;
    return;
  }
  ++s.consecutive_bad_steps;
  ++s.skipped_steps;
  spdlog::warn("[{}] step {}: loss {} / gradient norm {} is not finite; update skipped ({} in a row, limit {})", stage,
               s.step, loss, grad_norm, s.consecutive_bad_steps, max_bad_steps);
  metrics_->write("skipped", s.step, {{"loss", loss}, {"grad_norm", grad_norm}});
  if (s.consecutive_bad_steps >= max_bad_steps)
    throw Error("[" + stage + "] stopping at step " + std::to_string(s.step) + ": the loss or gradient was NaN/Inf " +
                std::to_string(s.consecutive_bad_steps) +
                " updates in a row (training.max_bad_steps). The weights diverged or the data is broken; "
                "last checkpoint: " + (last_checkpoint_.empty() ? "none" : last_checkpoint_) +
                ". Hint: lower the learning rate, raise the warmup, or use precision fp32.");
}

std::string RunContext::save_checkpoint(TrainingState& s, const optim::Optimizer& optimizer,
                                        const std::function<void(const std::string& dir)>& write_files,
                                        int64_t keep_last, std::optional<int64_t> keep_step) {
  if (!dist_.is_main()) return "";  // [dist] rank 0 writes; the replicas are identical
  capture_rng(s, device_.is_cuda());
  last_checkpoint_ = checkpoints_.save(s.step, [&](const std::string& dir) {
    write_files(dir);
    model::save_tensor_file(dir + "/" + kOptimizerFile, optimizer.state_dict(), {{"optimizer", optimizer.kind()}});
    save_training_state(s, dir + "/" + kTrainingStateFile);
  });
  checkpoints_.prune(keep_last, keep_step);
  spdlog::info("[checkpoint] step {} saved to {}", s.step, last_checkpoint_);
  return last_checkpoint_;
}

TrainingState RunContext::load_checkpoint(const std::string& dir, optim::Optimizer& optimizer) {
  optimizer.load_state_dict(model::load_tensor_file(dir + "/" + kOptimizerFile).tensors);
  TrainingState s = load_training_state(dir + "/" + kTrainingStateFile);
  restore_rng(s, device_.is_cuda());
  last_checkpoint_ = dir;
  return s;
}

}  // namespace tisa::train
