// GLUE fine-tuning (see finetune.h). The loop is run_loop(); everything it calls is a named
// function below it (STYLE §9). Device, threads, logs, metrics, signals, the NaN policy and
// checkpoints are the training skeleton's (train/run_context.h); one update is UpdateStep's
// (train/update_step.h), as in pretraining.
#include "glue/finetune.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/fs.h"
#include "common/progress.h"
#include "config/config_loader.h"
#include "data/glue_dataset.h"
#include "glue/glue_batches.h"
#include "glue/glue_eval.h"
#include "glue/glue_model.h"
#include "model/autocast.h"
#include "model/hf_checkpoint.h"
#include "model/tensor_io.h"
#include "optim/adamw.h"
#include "optim/schedule.h"
#include "train/data_parallel.h"
#include "train/distributed.h"
#include "train/interrupt.h"
#include "train/memory_estimate.h"
#include "train/precision_choice.h"
#include "train/run_context.h"
#include "train/tensorboard_run.h"
#include "train/update_step.h"

namespace tisa::glue {
namespace {

namespace stdfs = std::filesystem;

constexpr const char* kWeightsFile = "weights.safetensors";  // parameters by GlueModel's names
constexpr const char* kGlueStateFile = "glue_state.json";    // EvalRecord

// The evaluations so far: what picks the best model, and what a resume carries on.
struct EvalRecord {
  double best_value = -std::numeric_limits<double>::infinity();
  int64_t best_step = -1;
  std::map<std::string, double> best_metrics;
  nlohmann::json history = nlohmann::json::array();
  std::vector<int64_t> non_finite_steps;  // evaluations whose main metric was NaN/Inf

  nlohmann::json to_json() const {
    return {{"best_value", best_step >= 0 ? nlohmann::json(best_value) : nlohmann::json()},
            {"best_step", best_step},
            {"best_metrics", best_metrics},
            {"history", history},
            {"non_finite_steps", non_finite_steps}};
  }
  static EvalRecord from_json(const nlohmann::json& j, const std::string& source) {
    EvalRecord r;
    try {
      r.best_step = j.at("best_step").get<int64_t>();
      if (r.best_step >= 0) r.best_value = j.at("best_value").get<double>();
      for (const auto& [name, value] : j.at("best_metrics").items())  // JSON writes NaN as null
        r.best_metrics[name] = value.is_null() ? std::nan("") : value.get<double>();
      r.history = j.at("history");
      r.non_finite_steps = j.at("non_finite_steps").get<std::vector<int64_t>>();
    } catch (const std::exception& e) {
      throw Error(source + ": malformed GLUE state (" + e.what() + ")");
    }
    return r;
  }
};

// Everything one fine-tuning holds; built once by set_up(), used by the loop and the helpers.
struct Finetune {
  Finetune(const FinetuneRequest& r, train::RunContext& c)
      : req(r), task(glue_task(r.task)), gc(r.config.glue), tc(r.config.training), ctx(c), dist(c.dist()) {}
  const FinetuneRequest& req;
  const GlueTaskInfo& task;
  const config::GlueConfig& gc;
  const config::TrainingConfig& tc;
  train::RunContext& ctx;
  train::Distributed& dist;
  data::GlueEncodedSplit train;
  std::vector<data::GlueEncodedSplit> devs;
  std::unique_ptr<GlueModel> model;
  std::unique_ptr<optim::AdamW> optimizer;
  std::unique_ptr<optim::LrSchedule> schedule;
  std::unique_ptr<train::GradientReducer> reducer;  // [dist]
  std::unique_ptr<GlueSampler> sampler;
  int64_t steps = 0, warmup = 0, steps_per_epoch = 1, eval_every = 1, log_every = 1, pad_id = 0;
  int64_t accumulation = 1;  // micro-batches per update per process (training.accumulation)
  train::TrainingState state;
  EvalRecord evals;
  std::string best_dir;
  double log_loss = 0;  // running sum between two "train" records
  int64_t log_count = 0;
};

void set_up(Finetune& f);
void load_data(Finetune& f);
void build_model(Finetune& f);
void resume(Finetune& f);
train::UpdateResult update(Finetune& f, int64_t step);
void log_update(Finetune& f, const train::UpdateResult& r, Progress& progress);
void evaluate_and_keep(Finetune& f, int64_t step);
void save_checkpoint(Finetune& f);
FinetuneResult finish(Finetune& f);
std::string format_metrics(const std::map<std::string, double>& m);
bool due(int64_t step, int64_t interval, int64_t last) { return step == last || (interval > 0 && step % interval == 0); }

// The training loop (STYLE §9), the same shape as pretraining's. Returns false when interrupted.
bool run_loop(Finetune& f) {
  Progress progress("[glue] " + f.task.name, f.steps, "ex", f.log_every * 10);
  for (int64_t step = f.state.step; step < f.steps;) {
    train::UpdateResult r = update(f, step);                                     // fwd + bwd + clip + AdamW
    const bool stop = train::reduce_update_result(f.dist, r, train::interrupt_requested());  // [dist] sums
    f.state.step = ++step;
    f.state.data_position = f.sampler->position();
    f.ctx.count_update(f.state, r.applied, r.loss, r.grad_norm, f.tc.max_bad_steps, "glue");  // NaN policy
    log_update(f, r, progress);
    if (step % f.eval_every == 0 && step != f.steps) evaluate_and_keep(f, step);
    if (due(step, f.tc.checkpoint_interval, f.steps) || stop) save_checkpoint(f);
    if (stop && step < f.steps) {
      progress.finish();
      return false;
    }
  }
  progress.finish();
  return true;
}

FinetuneResult finetune_in_run_dir(const FinetuneRequest& req, train::RunContext& ctx) {
  Finetune f(req, ctx);
  set_up(f);
  if (!run_loop(f)) {
    spdlog::warn("[glue] {} seed {}: interrupted after step {}: checkpoint {} saved. Resume with `tisa-train glue "
                 "... --run-dir <the same folder> --resume`",
                 f.task.name, req.seed, f.state.step, ctx.last_checkpoint());
    FinetuneResult r;
    r.exit_code = kExitInterrupted;
    r.task = f.task.name;
    r.seed = req.seed;
    return r;
  }
  evaluate_and_keep(f, f.steps);
  return finish(f);
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
  if (tc.accumulation <= 0) throw Error("training.accumulation must be positive, got " + std::to_string(tc.accumulation));
  fs::create_directories(req.run_dir);
  // [dist] data parallelism (train/distributed.h): ranks split each batch; rank 0 writes.
  train::Distributed& dist = train::process_group(train::rank_device(train::training_device(tc)));
  const int64_t parts = tc.accumulation * dist.world_size();
  if (gc.batch_size % parts != 0)
    throw Error("glue.batch_size " + std::to_string(gc.batch_size) + " is not a multiple of training.accumulation " +
                std::to_string(tc.accumulation) + " × " + std::to_string(dist.world_size()) +
                " processes (every micro-batch takes an equal share of each batch)");
  train::RunContext ctx(req.run_dir, tc, dist, req.handle_signals);
  return ctx.guard([&] { return finetune_in_run_dir(req, ctx); });
}

std::optional<FinetuneResult> read_finetune_result(const std::string& run_dir) {
  const std::string path = (stdfs::path(run_dir) / "results.json").string();
  if (!fs::exists(path)) return std::nullopt;
  try {
    auto j = nlohmann::json::parse(fs::read_file(path));
    FinetuneResult r;
    r.task = j.at("task").get<std::string>();
    r.seed = j.at("seed").get<int64_t>();
    r.best_step = j.at("best_step").get<int64_t>();
    r.main_metric = j.at("main_metric").get<std::string>();
    for (const auto& [name, value] : j.at("metrics").items())  // JSON writes NaN as null
      r.metrics[name] = value.is_null() ? std::nan("") : value.get<double>();
    r.best_dir = j.at("best_model").get<std::string>();
    r.leaderboard_files = j.at("leaderboard_files").get<std::vector<std::string>>();
    return r;
  } catch (const std::exception& e) {
    throw Error(path + ": malformed results (" + e.what() + "); delete it to redo this fine-tuning");
  }
}

namespace {

void set_up(Finetune& f) {
  const auto& gc = f.gc;
  torch::manual_seed(static_cast<uint64_t>(f.req.seed));
  if (f.ctx.device().is_cuda()) torch::cuda::manual_seed_all(static_cast<uint64_t>(f.req.seed));
  load_data(f);
  build_model(f);
  // --- optimiser and schedule (SPEC §7)
  f.steps = resolve_glue_steps(gc, static_cast<int64_t>(f.train.size()));
  f.warmup = resolve_glue_warmup(gc, f.steps);
  optim::AdamWOptions aopt;
  aopt.beta1 = f.req.config.optimizer.beta1;
  aopt.beta2 = f.req.config.optimizer.beta2;
  aopt.eps = f.req.config.optimizer.eps;
  aopt.weight_decay = gc.weight_decay;
  f.optimizer = std::make_unique<optim::AdamW>(f.model->named_parameters(), aopt);
  f.schedule = std::make_unique<optim::LrSchedule>(config::ScheduleType::kLinearHF, gc.lr, f.warmup, f.steps);
  f.steps_per_epoch = std::max<int64_t>(1, (static_cast<int64_t>(f.train.size()) + gc.batch_size - 1) / gc.batch_size);
  f.eval_every = gc.eval_interval > 0 ? gc.eval_interval : f.steps_per_epoch;
  f.log_every = std::max<int64_t>(1, f.tc.log_interval);
  f.accumulation = f.tc.accumulation;
  const uint64_t sampler_seed = static_cast<uint64_t>(f.req.seed) * 0x9E3779B97F4A7C15ULL + 17;
  if (gc.group_by_length) {
    std::vector<int64_t> lengths(f.train.size());
    for (size_t i = 0; i < lengths.size(); ++i) lengths[i] = f.train.length(i);
    f.sampler = std::make_unique<GlueSampler>(f.train.size(), sampler_seed, std::move(lengths),
                                              static_cast<size_t>(50 * gc.batch_size));
  } else {
    f.sampler = std::make_unique<GlueSampler>(f.train.size(), sampler_seed);
  }
  f.best_dir = (stdfs::path(f.req.run_dir) / "best").string();
  // A resumed run keeps its record (glue_runner checked the settings against it); a fresh one writes it.
  const std::string config_path = (stdfs::path(f.req.run_dir) / "config.yaml").string();
  if (f.dist.is_main() && (!f.req.resume || !fs::exists(config_path)))
    config::write_resolved_config(f.req.config, config_path);
  // TensorBoard's hyper-parameters name the model fine-tuned: the --init folder's sizes and schemes.
  f.ctx.describe_run({train::RunKind::kGlue, f.req.config, model::read_hf_config(f.req.init_dir).model});
  if (f.req.resume) resume(f);
  else f.ctx.open_metrics();
  std::string dev_sizes;
  for (const auto& d : f.devs) dev_sizes += (dev_sizes.empty() ? "" : "+") + std::to_string(d.size());
  spdlog::info("[glue] {} seed {}: {} train examples, dev {}, {} steps (batch {} = {} process(es) x {} micro-batches, "
               "{:.2f} epochs), warmup {}, lr {}, device {}",
               f.task.name, f.req.seed, f.train.size(), dev_sizes, f.steps, gc.batch_size, f.dist.world_size(),
               f.accumulation, static_cast<double>(f.steps) / static_cast<double>(f.steps_per_epoch), f.warmup, gc.lr,
               f.ctx.device().str());
  f.model->train(true);
}

void load_data(Finetune& f) {
  const std::string& dir = f.req.prepared_dir;
  f.train = data::read_glue_split(data::glue_split_path(dir, "train"));
  for (const auto& name : f.task.dev_splits) f.devs.push_back(data::read_glue_split(data::glue_split_path(dir, name)));
}

// The model from --init (sizes that cannot fit are refused before anything is allocated), the
// same initial weights on every rank, and the data-parallel reducer.
void build_model(Finetune& f) {
  const auto& gc = f.gc;
  const c10::Device device = f.ctx.device();
  {
    const auto model_config = model::read_hf_config(f.req.init_dir).model;
    const int64_t per_micro = gc.batch_size / (f.tc.accumulation * f.dist.world_size());
    auto need = train::estimate_training_memory(model_config, per_micro, gc.max_length, 0);
    if (device.is_cuda()) need.activation_bytes = 0, need.parameter_bytes = 4 * need.parameters;
    train::require_memory_fits(need, train::physical_memory_bytes(), "glue.batch_size", gc.batch_size,
                               "glue.max_length", gc.max_length);
  }
  f.model = std::make_unique<GlueModel>(f.req.init_dir, f.task, gc.classifier_dropout, device,
                                        ClassifierHead::kCreateIfMissing);
  check_data_fits_model(*f.model, f.req.init_dir, f.req.prepared_dir);
  check_split_fits_model(*f.model, f.train);
  if (gc.max_length > f.model->max_positions())
    throw Error("glue.max_length " + std::to_string(gc.max_length) + " exceeds the model's max_position_embeddings " +
                std::to_string(f.model->max_positions()));
  const auto manifest = data::read_glue_manifest(f.req.prepared_dir);
  f.pad_id = manifest.pad_id >= 0 ? manifest.pad_id : f.model->pad_token_id();
  // [dist] rank 0's initial weights everywhere (once the ranks agree on the settings); gradients
  // summed in buckets during the last backward (each rank's loss is its share of the mean).
  f.dist.require_same_on_all_ranks(fs::fnv1a64(config::dump_yaml(f.req.config)), "the fine-tuning settings");
  std::vector<at::Tensor> params;
  for (auto& np : f.model->named_parameters()) params.push_back(np.second);
  f.dist.broadcast_tensors(params);
  f.reducer = std::make_unique<train::GradientReducer>(f.dist, params, train::GradientReducer::kDefaultBucketBytes,
                                                       train::GradientReduction::kSum);
}

// Exact resume from the newest valid checkpoint: weights, AdamW moments, generators, sampler
// position, evaluations so far.
void resume(Finetune& f) {
  const train::CheckpointInfo from = f.ctx.resume_point("start without --resume");
  {
    auto saved = model::load_tensor_file(from.path + "/" + kWeightsFile).tensors;
    torch::NoGradGuard no_grad;
    for (auto& [name, p] : f.model->named_parameters()) {
      auto it = saved.find(name);
      if (it == saved.end() || !it->second.sizes().equals(p.sizes()))
        throw Error(from.path + "/" + kWeightsFile + ": no tensor " + name + " of the model's shape (another model?)");
      p.copy_(it->second);
    }
  }
  f.state = f.ctx.load_checkpoint(from.path, *f.optimizer);
  f.sampler->seek(f.state.data_position);
  const std::string state_path = from.path + "/" + kGlueStateFile;
  f.evals = EvalRecord::from_json(nlohmann::json::parse(fs::read_file(state_path)), state_path);
  f.ctx.open_metrics(from.step);  // the steps after the checkpoint are redone
  spdlog::info("[glue] resuming {} at step {}", from.path, f.state.step);
}

// This process's micro-batches of update `step`: the global batch of glue.batch_size examples is
// cut into world × accumulation equal parts; micro-batch i of rank r is part r·accumulation + i.
std::vector<GlueBatch> micro_batches(Finetune& f) {
  const std::vector<size_t> rows = f.sampler->next(f.gc.batch_size);  // the same on every rank
  const size_t per = rows.size() / static_cast<size_t>(f.accumulation * f.dist.world_size());
  std::vector<GlueBatch> out;
  for (int64_t i = 0; i < f.accumulation; ++i) {
    const size_t part = static_cast<size_t>(f.dist.rank() * f.accumulation + i);
    const auto first = rows.begin() + static_cast<std::ptrdiff_t>(part * per);
    out.push_back(make_glue_batch(f.train, std::vector<size_t>(first, first + static_cast<std::ptrdiff_t>(per)),
                                  f.pad_id, f.ctx.device()));
  }
  return out;
}

// One update: the summed loss of every micro-batch over the examples of the whole update.
train::UpdateResult update(Finetune& f, int64_t step) {
  std::vector<GlueBatch> micro = micro_batches(f);
  std::vector<std::vector<double>> counts;  // per micro-batch: {examples}
  for (const auto& b : micro) counts.push_back({static_cast<double>(b.rows.size())});
  auto forward = [&](size_t i) {
    model::AutocastScope autocast(f.ctx.device(), train::uses_bf16(f.tc.precision));
    auto logits = f.model->forward(micro[i]);
    return std::vector<torch::Tensor>{f.model->loss_sum(logits.to(torch::kFloat32), micro[i])};
  };
  train::UpdateStep step_fn(*f.optimizer, *f.schedule, f.req.config.optimizer.clip_norm);
  step_fn.dist = &f.dist;
  step_fn.reducer = f.reducer.get();
  return step_fn(counts, forward, step);
}

void log_update(Finetune& f, const train::UpdateResult& r, Progress& progress) {
  const int64_t done = f.state.step;
  if (r.applied) {
    f.log_loss += r.loss;
    ++f.log_count;
    if (f.dist.is_main()) progress.update(done, static_cast<double>(f.gc.batch_size), {{"loss", r.loss}, {"lr", r.lr}});
  }
  if (!due(done, f.log_every, f.steps) || f.log_count == 0) return;
  f.ctx.metrics().write("train", done,
                        {{"loss", f.log_loss / static_cast<double>(f.log_count)}, {"lr", r.lr},
                         {"grad_norm", r.grad_norm}, {"epoch", static_cast<double>(done) / f.steps_per_epoch}});
  f.log_loss = 0;
  f.log_count = 0;
}

// Dev metrics of every dev split, flattened (metric_key()).
std::map<std::string, double> evaluate_dev(Finetune& f) {
  std::map<std::string, double> flat;
  for (const auto& dev : f.devs) {
    auto predictions = predict_split(*f.model, dev, f.gc.eval_batch_size, f.ctx.device());
    for (const auto& [name, value] : split_metrics(f.task, predictions, dev)) flat[name] = value;
  }
  f.model->train(true);
  return flat;
}

void evaluate_and_keep(Finetune& f, int64_t step) {
  auto m = evaluate_dev(f);
  auto it = m.find(f.task.main_metric);
  TISA_CHECK(it != m.end(), "main metric " + f.task.main_metric + " not computed");
  // NaN is never a result: a non-finite evaluation (e.g. a correlation of constant predictions)
  // cannot become the best model.
  auto& e = f.evals;
  const double value = it->second;
  const bool finite = std::isfinite(value);
  if (!finite) e.non_finite_steps.push_back(step);
  const bool improved = finite && (e.best_step < 0 || value > e.best_value);
  spdlog::info("[eval] {} step {}: {}{}", f.task.name, step, format_metrics(m),
               improved ? "  (best)" : finite ? "" : "  (not finite: not a candidate for best)");
  nlohmann::json record(m);
  record["best"] = improved;
  f.ctx.metrics().write("eval", step, record);
  e.history.push_back({{"step", step}, {"metrics", m}});
  if (!improved) return;
  e.best_value = value;
  e.best_step = step;
  e.best_metrics = m;
  if (f.dist.is_main()) f.model->save(f.best_dir, f.req.init_dir, f.gc.max_length);  // [dist]
}

void save_checkpoint(Finetune& f) {
  f.state.lr = f.schedule->lr_at(std::max<int64_t>(0, f.state.step - 1));
  f.state.schedule = "linear";
  f.ctx.save_checkpoint(
      f.state, *f.optimizer,
      [&](const std::string& dir) {
        model::TensorMap weights;
        for (auto& [name, p] : f.model->named_parameters()) weights[name] = p.detach();
        model::save_tensor_file(dir + "/" + kWeightsFile, weights, {{"task", f.task.name}});
        fs::write_file_atomic(dir + "/" + kGlueStateFile, f.evals.to_json().dump(2) + "\n");
      },
      f.tc.keep_checkpoints);
}

// After the last evaluation: test predictions of the best model and results.json (rank 0).
FinetuneResult finish(Finetune& f) {
  const auto& e = f.evals;
  if (e.best_step < 0) {
    std::string at;
    for (int64_t s : e.non_finite_steps) at += (at.empty() ? "" : ", ") + std::to_string(s);
    throw Error("[glue] " + f.task.name + " seed " + std::to_string(f.req.seed) +
                ": every evaluation gave a non-finite " + f.task.main_metric + " (steps " + at +
                "), so there is no best model (constant or NaN predictions; hint: check the data, lower glue.lr or "
                "train longer)");
  }
  FinetuneResult result;
  result.task = f.task.name;
  result.seed = f.req.seed;
  result.best_step = e.best_step;
  result.main_metric = f.task.main_metric;
  result.metrics = e.best_metrics;
  result.best_dir = f.best_dir;
  if (f.dist.is_main()) {  // [dist] test predictions and result files: rank 0
    GlueModel best(f.best_dir, f.task, -1.0, f.ctx.device());
    const auto manifest = data::read_glue_manifest(f.req.prepared_dir);
    const std::string lb_dir = (stdfs::path(f.req.run_dir) / "leaderboard").string();
    for (const auto& test : f.task.test_splits) {
      if (std::find(manifest.splits.begin(), manifest.splits.end(), test.split) == manifest.splits.end()) continue;
      fs::create_directories(lb_dir);
      auto split = data::read_glue_split(data::glue_split_path(f.req.prepared_dir, test.split));
      auto predictions = predict_split(best, split, f.gc.eval_batch_size, f.ctx.device());
      std::string path = (stdfs::path(lb_dir) / test.leaderboard).string();
      write_prediction_file(path, f.task, split, predictions);
      result.leaderboard_files.push_back(path);
      spdlog::info("[glue] {}: {} predictions written to {}", f.task.name, split.size(), path);
    }
    // The best model's dev predictions: what paired comparisons between variants resample.
    nlohmann::json dev = {{"task", f.task.name}, {"seed", f.req.seed}, {"best_step", e.best_step},
                          {"splits", nlohmann::json::array()}};
    for (const auto& split : f.devs)
      dev["splits"].push_back(dev_predictions_json(f.task, split, predict_split(best, split, f.gc.eval_batch_size,
                                                                                f.ctx.device())));
    fs::write_file_atomic((stdfs::path(f.req.run_dir) / kDevPredictionsFile).string(), dev.dump() + "\n");
  }
  nlohmann::json results = {{"task", f.task.name},
                            {"seed", f.req.seed},
                            {"best_step", e.best_step},
                            {"steps", f.steps},
                            {"interrupted", false},
                            {"main_metric", f.task.main_metric},
                            {"metrics", e.best_metrics},
                            {"history", e.history},
                            {"best_model", f.best_dir},
                            {"leaderboard_files", result.leaderboard_files}};
  if (f.dist.is_main())
    fs::write_file_atomic((stdfs::path(f.req.run_dir) / "results.json").string(), results.dump(2) + "\n");
  nlohmann::json final_metrics(e.best_metrics);  // results.json's: the best evaluation's
  final_metrics["best_step"] = e.best_step;
  f.ctx.write_final_metrics(f.steps, final_metrics);
  spdlog::info("[glue] {} seed {}: best step {}: {}", f.task.name, f.req.seed, e.best_step,
               format_metrics(e.best_metrics));
  return result;
}

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

}  // namespace tisa::glue
