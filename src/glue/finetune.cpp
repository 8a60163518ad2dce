// GLUE fine-tuning loop (see finetune.h).
#include "glue/finetune.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/fs.h"
#include "common/logging.h"
#include "common/metrics_writer.h"
#include "common/progress.h"
#include "config/config_loader.h"
#include "data/glue_dataset.h"
#include "glue/glue_batches.h"
#include "glue/glue_eval.h"
#include "glue/glue_model.h"
#include "model/autocast.h"
#include "model/hf_checkpoint.h"
#include "optim/adamw.h"
#include "optim/grad_utils.h"
#include "optim/schedule.h"
#include "train/distributed.h"
#include "train/interrupt.h"
#include "train/memory_estimate.h"
#include "train/runtime_info.h"

namespace tisa::glue {
namespace {

namespace stdfs = std::filesystem;

c10::Device device_of(const config::TrainingConfig& t) {
  if (t.device == config::Device::kCuda) {
    if (!torch::cuda::is_available())
      throw Error("training.device is cuda but CUDA is not available in this LibTorch build/machine");
    return c10::Device(c10::DeviceType::CUDA, 0);
  }
  return c10::Device(c10::DeviceType::CPU);
}

// Dev metrics of every dev split, flattened (metric_key()).
std::map<std::string, double> evaluate_dev(GlueModel& model, const GlueTaskInfo& task,
                                           const std::vector<data::GlueEncodedSplit>& devs, int64_t batch_size,
                                           c10::Device device, nlohmann::json* per_split) {
  std::map<std::string, double> flat;
  for (const auto& dev : devs) {
    auto predictions = predict_split(model, dev, batch_size, device);
    auto metrics = split_metrics(task, predictions, dev);
    if (per_split) (*per_split)[dev.split] = metrics;
    for (const auto& [name, value] : metrics) flat[name] = value;
  }
  return flat;
}

FinetuneResult finetune_in_run_dir(const FinetuneRequest& req, c10::Device device, train::Distributed& dist,
                                   MetricsWriter& metrics);

std::string format_metrics(const std::map<std::string, double>& m) {
  std::string out;
  char buf[96];
  for (const auto& [k, v] : m) {
    std::snprintf(buf, sizeof(buf), "%s%s %.4f", out.empty() ? "" : ", ", k.c_str(), v);
    out += buf;
  }
  return out;
}

}  // namespace

int64_t resolve_glue_steps(const config::GlueConfig& glue, int64_t train_examples) {
  if (glue.steps > 0) return glue.steps;
  if (glue.epochs <= 0) throw Error("glue.steps is 0 and glue.epochs is not positive: nothing to train");
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(glue.epochs * static_cast<double>(train_examples) /
                                                             static_cast<double>(glue.batch_size))));
}

int64_t resolve_glue_warmup(const config::GlueConfig& glue, int64_t steps) {
  if (glue.warmup_steps > 0) return std::min(glue.warmup_steps, steps);
  return static_cast<int64_t>(std::ceil(static_cast<double>(steps) * glue.warmup_fraction));
}

FinetuneResult run_finetune(const FinetuneRequest& req) {
  glue_task(req.task);  // an unknown task fails before anything is written
  const config::GlueConfig& gc = req.config.glue;
  const config::TrainingConfig& tc = req.config.training;
  if (gc.batch_size <= 0) throw Error("glue.batch_size must be positive, got " + std::to_string(gc.batch_size));
  fs::create_directories(req.run_dir);
  // [dist] data parallelism (train/distributed.h): ranks split each batch; rank 0 writes.
  const c10::Device device = train::rank_device(device_of(tc));
  train::Distributed& dist = train::process_group(device);
  if (dist.enabled() && gc.batch_size % dist.world_size() != 0)
    throw Error("glue.batch_size " + std::to_string(gc.batch_size) + " is not a multiple of the " +
                std::to_string(dist.world_size()) + " processes (each takes an equal share of every batch)");
  std::optional<logging::RunLogFile> log_file;
  if (dist.is_main()) log_file.emplace((stdfs::path(req.run_dir) / "train.log").string());
  if (dist.is_main()) config::write_resolved_config(req.config, (stdfs::path(req.run_dir) / "config.yaml").string());
  MetricsWriter disabled_metrics;  // [dist] ranks > 0
  std::optional<MetricsWriter> main_metrics;
  if (dist.is_main()) main_metrics.emplace((stdfs::path(req.run_dir) / "metrics.jsonl").string());
  MetricsWriter& metrics = main_metrics ? *main_metrics : disabled_metrics;
  try {
    return finetune_in_run_dir(req, device, dist, metrics);
  } catch (const std::exception& e) {
    if (log_file) log_file->record_fatal(e.what());  // main() prints it once the file sink is gone
    throw;
  }
}

namespace {

FinetuneResult finetune_in_run_dir(const FinetuneRequest& req, c10::Device device, train::Distributed& dist,
                                   MetricsWriter& metrics) {
  const GlueTaskInfo& task = glue_task(req.task);
  const config::GlueConfig& gc = req.config.glue;
  const config::TrainingConfig& tc = req.config.training;
  train::apply_thread_settings(tc.threads);
  torch::manual_seed(static_cast<uint64_t>(req.seed));
  if (device.is_cuda()) torch::cuda::manual_seed_all(static_cast<uint64_t>(req.seed));

  // --- data
  auto train = data::read_glue_split(data::glue_split_path(req.prepared_dir, "train"));
  std::vector<data::GlueEncodedSplit> devs;
  for (const auto& name : task.dev_splits) devs.push_back(data::read_glue_split(data::glue_split_path(req.prepared_dir, name)));
  const auto manifest = data::read_glue_manifest(req.prepared_dir);

  // --- model (sizes that cannot fit are refused before anything is allocated)
  {
    const auto model_config = model::read_hf_config(req.init_dir).model;
    const int64_t per_rank = gc.batch_size / std::max(1, dist.world_size());
    auto need = train::estimate_training_memory(model_config, per_rank, gc.max_length, 0);
    if (device.is_cuda()) need.activation_bytes = 0, need.parameter_bytes = 4 * need.parameters;
    train::require_memory_fits(need, train::physical_memory_bytes(), "glue.batch_size", gc.batch_size,
                               "glue.max_length", gc.max_length);
  }
  GlueModel model(req.init_dir, task, gc.classifier_dropout, device, ClassifierHead::kCreateIfMissing);
  check_data_fits_model(model, req.init_dir, req.prepared_dir);
  check_split_fits_model(model, train);
  if (gc.max_length > model.max_positions())
    throw Error("glue.max_length " + std::to_string(gc.max_length) + " exceeds the model's max_position_embeddings " +
                std::to_string(model.max_positions()));
  const int64_t pad_id = manifest.pad_id >= 0 ? manifest.pad_id : model.pad_token_id();
  // [dist] rank 0's initial weights everywhere (once the ranks agree on the settings); gradients
  // averaged in buckets during backward.
  dist.require_same_on_all_ranks(fs::fnv1a64(config::dump_yaml(req.config)), "the fine-tuning settings");
  std::vector<at::Tensor> dist_params;
  for (auto& np : model.named_parameters()) dist_params.push_back(np.second);
  dist.broadcast_tensors(dist_params);
  train::GradientReducer reducer(dist, dist_params);

  // --- optimiser and schedule (SPEC §7)
  const int64_t steps = resolve_glue_steps(gc, static_cast<int64_t>(train.size()));
  const int64_t warmup = resolve_glue_warmup(gc, steps);
  optim::AdamWOptions aopt;
  aopt.beta1 = req.config.optimizer.beta1;
  aopt.beta2 = req.config.optimizer.beta2;
  aopt.eps = req.config.optimizer.eps;
  aopt.weight_decay = gc.weight_decay;
  optim::AdamW optimizer(model.named_parameters(), aopt);
  optim::LrSchedule schedule(config::ScheduleType::kLinearHF, gc.lr, warmup, steps);
  const int64_t steps_per_epoch =
      std::max<int64_t>(1, (static_cast<int64_t>(train.size()) + gc.batch_size - 1) / gc.batch_size);
  const int64_t eval_every = gc.eval_interval > 0 ? gc.eval_interval : steps_per_epoch;
  const int64_t log_every = std::max<int64_t>(1, tc.log_interval);

  spdlog::info("[glue] {} seed {}: {} train examples, dev {}, {} steps (batch {}, {:.2f} epochs), warmup {}, lr {}, "
               "device {}",
               task.name, req.seed, train.size(), [&] {
                 std::string s;
                 for (const auto& d : devs) s += (s.empty() ? "" : "+") + std::to_string(d.size());
                 return s;
               }(), steps, gc.batch_size, static_cast<double>(steps) / static_cast<double>(steps_per_epoch), warmup,
               gc.lr, device.str());

  GlueSampler sampler(train.size(), static_cast<uint64_t>(req.seed) * 0x9E3779B97F4A7C15ULL + 17);
  const std::string best_dir = (stdfs::path(req.run_dir) / "best").string();
  const std::string tokenizer_dir = req.init_dir;
  double best_value = -std::numeric_limits<double>::infinity();
  int64_t best_step = -1;
  std::map<std::string, double> best_metrics;
  nlohmann::json history = nlohmann::json::array();
  int64_t bad_steps = 0;
  std::vector<int64_t> non_finite_steps;  // evaluations whose main metric was NaN/Inf

  auto evaluate_and_keep = [&](int64_t step) {
    nlohmann::json per_split;
    auto m = evaluate_dev(model, task, devs, gc.eval_batch_size, device, &per_split);
    model.train(true);
    auto it = m.find(task.main_metric);
    TISA_CHECK(it != m.end(), "main metric " + task.main_metric + " not computed");
    // NaN is never a result: a non-finite evaluation (e.g. a correlation of constant predictions)
    // cannot become the best model.
    const double value = it->second;
    const bool finite = std::isfinite(value);
    if (!finite) non_finite_steps.push_back(step);
    bool improved = finite && (best_step < 0 || value > best_value);
    spdlog::info("[eval] {} step {}: {}{}", task.name, step, format_metrics(m),
                 improved ? "  (best)" : finite ? "" : "  (not finite: not a candidate for best)");
    nlohmann::json record(m);
    record["best"] = improved;
    metrics.write("eval", step, record);
    history.push_back({{"step", step}, {"metrics", m}});
    if (improved) {
      best_value = value;
      best_step = step;
      best_metrics = m;
      if (dist.is_main()) model.save(best_dir, tokenizer_dir, gc.max_length);  // [dist]
    }
  };

  train::install_interrupt_handlers();
  model.train(true);
  Progress progress("[glue] " + task.name, steps, "ex", log_every * 10);
  double loss_sum = 0;
  int64_t loss_count = 0;
  bool interrupted = false;
  for (int64_t step = 0; step < steps; ++step) {
    auto rows = sampler.next(gc.batch_size);
    if (dist.enabled()) {  // [dist] this rank's equal share of the global batch
      const size_t per = rows.size() / static_cast<size_t>(dist.world_size());
      const auto first = rows.begin() + static_cast<std::ptrdiff_t>(per * static_cast<size_t>(dist.rank()));
      rows = std::vector<size_t>(first, first + static_cast<std::ptrdiff_t>(per));
    }
    auto batch = make_glue_batch(train, rows, pad_id, device);
    at::Tensor loss;
    {
      model::AutocastScope autocast(device, tc.precision == config::Precision::kBf16);
      auto logits = model.forward(batch);
      loss = model.loss(logits.to(torch::kFloat32), batch);
    }
    reducer.arm(true);  // [dist] all-reduce overlapped with this backward
    loss.backward();
    reducer.reduce();
    at::Tensor norm = optimizer.clip_grad_norm(req.config.optimizer.clip_norm);
    double loss_value = loss.item<double>();
    bool stop_now = train::interrupt_requested();
    if (dist.enabled()) {  // [dist] mean loss over ranks; every rank stops at the same step
      auto sums = dist.all_reduce_sum({loss_value, stop_now ? 1.0 : 0.0});
      loss_value = sums[0] / static_cast<double>(dist.world_size());
      stop_now = sums[1] > 0;
    }
    if (!std::isfinite(loss_value) || !optim::is_finite(norm)) {
      optimizer.zero_grad();
      if (++bad_steps > tc.max_bad_steps)
        throw Error("[glue] " + std::to_string(bad_steps) + " consecutive non-finite losses/gradients at step " +
                    std::to_string(step) + " (lower glue.lr?)");
      spdlog::warn("[glue] step {}: non-finite loss or gradient, update skipped", step);
      continue;
    }
    bad_steps = 0;
    const double lr = schedule.lr_at(step);
    optimizer.step(lr);
    optimizer.zero_grad();
    loss_sum += loss_value;
    ++loss_count;
    const int64_t done = step + 1;
    if (dist.is_main()) progress.update(done, static_cast<double>(rows.size()), {{"loss", loss_value}, {"lr", lr}});
    if (done % log_every == 0 || done == steps) {
      metrics.write("train", done,
                    {{"loss", loss_sum / static_cast<double>(loss_count)}, {"lr", lr},
                     {"grad_norm", norm.item<double>()}, {"epoch", static_cast<double>(done) / steps_per_epoch}});
      loss_sum = 0;
      loss_count = 0;
    }
    if (done % eval_every == 0 && done != steps) evaluate_and_keep(done);
    if (stop_now) {
      spdlog::warn("[glue] interrupted at step {}: evaluating and stopping", done);
      interrupted = true;
      evaluate_and_keep(done);
      break;
    }
  }
  if (!interrupted) evaluate_and_keep(steps);
  progress.finish();
  train::remove_interrupt_handlers();
  if (best_step < 0) {
    std::string at;
    for (int64_t s : non_finite_steps) at += (at.empty() ? "" : ", ") + std::to_string(s);
    throw Error("[glue] " + task.name + " seed " + std::to_string(req.seed) + ": every evaluation gave a non-finite " +
                task.main_metric + " (steps " + at + "), so there is no best model (constant or NaN predictions; "
                "hint: check the data, lower glue.lr or train longer)");
  }

  // --- test predictions with the best model
  FinetuneResult result;
  result.task = task.name;
  result.seed = req.seed;
  result.best_step = best_step;
  result.main_metric = task.main_metric;
  result.metrics = best_metrics;
  result.best_dir = best_dir;
  if (dist.is_main()) {  // [dist] test predictions and result files: rank 0
    GlueModel best(best_dir, task, -1.0, device);
    const std::string lb_dir = (stdfs::path(req.run_dir) / "leaderboard").string();
    for (const auto& test : task.test_splits) {
      bool present = false;
      for (const auto& s : manifest.splits) present = present || s == test.split;
      if (!present) continue;
      fs::create_directories(lb_dir);
      auto split = data::read_glue_split(data::glue_split_path(req.prepared_dir, test.split));
      auto predictions = predict_split(best, split, gc.eval_batch_size, device);
      std::string path = (stdfs::path(lb_dir) / test.leaderboard).string();
      write_prediction_file(path, task, split, predictions);
      result.leaderboard_files.push_back(path);
      spdlog::info("[glue] {}: {} predictions written to {}", task.name, split.size(), path);
    }
  }

  nlohmann::json results = {{"task", task.name},
                            {"seed", req.seed},
                            {"best_step", best_step},
                            {"steps", steps},
                            {"interrupted", interrupted},
                            {"main_metric", task.main_metric},
                            {"metrics", best_metrics},
                            {"history", history},
                            {"best_model", best_dir},
                            {"leaderboard_files", result.leaderboard_files}};
  if (dist.is_main()) fs::write_file_atomic((stdfs::path(req.run_dir) / "results.json").string(), results.dump(2) + "\n");
  spdlog::info("[glue] {} seed {}: best step {}: {}", task.name, req.seed, best_step, format_metrics(best_metrics));
  if (interrupted) throw Error("interrupted (results so far are in " + req.run_dir + ")");
  return result;
}

}  // namespace

}  // namespace tisa::glue
