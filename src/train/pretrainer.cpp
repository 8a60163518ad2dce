// The pretraining run; see pretrainer.h. The loop is run_loop(); everything it calls is a named
// function below it (STYLE §9).
#include "train/pretrainer.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>

#include "analysis/invariance.h"
#include "common/fs.h"
#include "common/logging.h"
#include "common/metrics_writer.h"
#include "common/progress.h"
#include "common/run_directory.h"
#include "config/config_loader.h"
#include "data/model_identity.h"
#include "data/pretrain_dataset.h"
#include "data/pretrain_examples.h"
#include "model/hf_checkpoint.h"
#include "model/tensor_io.h"
#include "optim/optimizer.h"
#include "optim/schedule.h"
#include "train/architecture_check.h"
#include "train/batch_dump.h"
#include "train/checkpoint.h"
#include "train/data_parallel.h"
#include "train/distributed.h"
#include "train/interrupt.h"
#include "train/run_context.h"
#include "train/memory_estimate.h"
#include "train/precision_choice.h"
#include "train/runtime_info.h"
#include "train/tensorboard_run.h"
#include "train/training_state.h"

namespace tisa::train {
namespace stdfs = std::filesystem;
namespace {

// Loads HF-layout weights (model.safetensors + config.json of `dir`) into `model` in place.
void load_weights(model::AlbertForPreTraining& model, const std::string& dir) {
  auto hf = model::read_hf_config(dir);
  const std::string file = dir + "/model.safetensors";
  auto tensors = model::from_hf_tensors(model::load_tensor_file(file).tensors, hf, file);
  torch::NoGradGuard no_grad;
  model::load_state_dict(*model, tensors, file);
}

// What a run holds, grouped by the set-up step that fills it (set_up() below); the loop and its
// helpers read them. Device, logs, metrics, signals, NaN policy and checkpoints are the
// skeleton's (run_context.h).

// Where the weights come from (choose_start), which decides the architecture (STYLE §8).
struct StartPoint {
  config::ModelConfig model_cfg;  // the architecture trained
  config::Config resolved;        // the run's config with that architecture (written to config.yaml)
  std::string resume_from;        // checkpoint folder when resuming, else ""
  int64_t resume_step = 0;
};

// The pretraining data (open_data) and the training loader (start_state_and_loader).
struct RunData {
  std::string dataset_dir;
  std::shared_ptr<const data::PretrainDataset> dataset;
  std::shared_ptr<const data::ExampleBuilder> train_examples, valid_examples;
  std::unique_ptr<data::PretrainBatchLoader> loader;
};

// What one update needs (build_model): the model, its optimiser and schedule, the step that runs
// forward, backward, clipping and the update, and the gradient reduction across processes.
struct Trainer {
  model::AlbertForPreTraining model{nullptr};
  std::unique_ptr<optim::Optimizer> optimizer;
  std::unique_ptr<optim::LrSchedule> schedule;
  std::unique_ptr<PretrainStep> step_fn;
  std::unique_ptr<GradientReducer> reducer;  // [dist] only with several processes
  int64_t accumulation = 1;                  // micro-batches per update (data_parallel.h: global batch rule)
};

// Running sums between two log lines (log_step).
struct LogWindow {
  double loss = 0, mlm = 0, sop = 0;
  int64_t steps = 0, tokens = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

struct Run {
  Run(const config::Config& c, const PretrainRunOptions& o, RunContext& context)
      : cfg(c), opt(o), ctx(context), dist(context.dist()), device(context.device()), run_dir(o.run_dir) {}
  const config::Config& cfg;
  const PretrainRunOptions& opt;
  RunContext& ctx;
  // [dist] data parallelism (train/distributed.h): a single process when WORLD_SIZE is unset.
  // Only rank 0 (dist.is_main()) writes logs, metrics and checkpoints.
  Distributed& dist;
  torch::Device device;
  std::string run_dir;
  StartPoint start;
  RunData data;
  Trainer trainer;
  TrainingState state;        // step, data position, best evaluation: saved in checkpoints
  int64_t last_eval_step = -1;
  PretrainRunResult result;
  LogWindow window;
  std::optional<BatchDump> dump;  // --dump-batches (batch_dump.h)
};

PretrainRunResult train_in_run_dir(const config::Config& cfg, const PretrainRunOptions& options, RunContext& ctx);
void set_up(Run& run);
std::vector<data::PretrainBatch> next_micro_batches(Run& run);
void handle_bad_step(Run& run, const UpdateResult& r);
void log_step(Run& run, const UpdateResult& r);
void run_evaluation(Run& run);
void save_checkpoint(Run& run);
void write_final_model(Run& run);
void write_final_metrics(Run& run);
bool due(int64_t step, int64_t interval, int64_t last) { return step == last || (interval > 0 && step % interval == 0); }

// The training loop (STYLE §9). Returns false when interrupted.
bool run_loop(Run& run) {
  const auto& t = run.cfg.training;
  Progress progress("[train]", t.steps, "tok", ::isatty(STDERR_FILENO) ? t.log_interval : t.steps + 1);
  for (int64_t step = run.state.step; step < t.steps;) {
    std::vector<data::PretrainBatch> micro = next_micro_batches(run);  // `accumulation` batches [B, L]
    UpdateResult r = (*run.trainer.step_fn)(micro, step);               // fwd + bwd + clip + update
    const bool interrupted = reduce_update_result(run.dist, r, interrupt_requested());  // [dist] sum of the ranks' shares
    run.state.step = ++step;
    if (run.dump) run.dump->write_update(step, micro.front(), r);
    run.state.data_position = run.data.loader->position().to_json();
    handle_bad_step(run, r);                                            // skip NaN/Inf, stop after too many
    log_step(run, r);
    if (run.opt.show_progress && run.dist.is_main())
      progress.update(step, static_cast<double>(r.tokens), {{"loss", r.loss}, {"lr", r.lr}});
    if (due(step, t.eval_interval, t.steps)) run_evaluation(run);
    const bool stop = interrupted || step == run.opt.stop_after_step;
    if (due(step, t.checkpoint_interval, t.steps) || stop) save_checkpoint(run);
    if (stop && step < t.steps) {
      progress.finish();
      return false;
    }
  }
  progress.finish();
  return true;
}

}  // namespace

PretrainRunResult run_pretraining(const config::Config& cfg, const PretrainRunOptions& options) {
  if (options.run_dir.empty()) throw Error("pretraining needs a run directory");
  if (options.resume && !options.dump_batches_dir.empty())
    throw Error("--dump-batches " + options.dump_batches_dir + " cannot be combined with --resume: a dump starts "
                "from the first update");
  if (options.resume && !options.init_dir.empty())
    throw Error("--init " + options.init_dir + " cannot be combined with --resume: a resumed run continues from "
                "its own checkpoint (drop --init, or start a new run without --resume)");
  // Rank 0 owns the run directory (the other ranks only read its checkpoints): one process per
  // run, and a fresh run never replaces a finished one (common/run_directory.h).
  std::optional<RunDirectory> owner;
  if (DistEnv::from_environment().rank == 0) {
    owner.emplace(options.run_dir, options.resume ? RunDirectory::Start::kContinue : RunDirectory::Start::kNew);
    if (!options.resume) owner->start_fresh("", pretraining_run_layout(), options.overwrite);
  }
  // [dist] join the process group of RANK/WORLD_SIZE/MASTER_* (none: a single process).
  auto dist = Distributed::from_environment(rank_device(training_device(cfg.training)));
  RunContext ctx(options.run_dir, cfg.training, *dist, options.handle_signals, cfg.data.workers);
  return ctx.guard([&] { return train_in_run_dir(cfg, options, ctx); });
}

namespace {

PretrainRunResult train_in_run_dir(const config::Config& configured, const PretrainRunOptions& options,
                                   RunContext& ctx) {
  // precision: auto becomes bf16 or fp32 here, so that config.yaml records what the run used.
  config::Config cfg = configured;
  cfg.training.precision = choose_precision(cfg.training.precision, ctx.device(), "[train]");
  Run run(cfg, options, ctx);
  set_up(run);
  const bool finished = run_loop(run);
  run.result.step = run.state.step;
  if (!finished) {
    spdlog::warn("[train] interrupted after step {}: checkpoint {} saved. Resume with:\n  tisa-train pretrain "
                 "--run-dir {} --resume",
                 run.state.step, run.result.last_checkpoint, run.run_dir);
    run.result.exit_code = kExitInterrupted;
    return run.result;
  }
  if (run.last_eval_step != run.state.step) run_evaluation(run);  // e.g. resumed at the last step
  if (run.result.last_checkpoint.empty() ||
      stdfs::path(run.result.last_checkpoint).filename() != CheckpointStore::folder_name(run.state.step))
    save_checkpoint(run);
  write_final_model(run);
  write_final_metrics(run);
  return run.result;
}

// set_up() in four parts, in this order: where the weights come from (and so the architecture),
// the data, the model with its optimiser and data parallelism, the state to start from.
void choose_start(Run& run);
void open_data(Run& run);
void build_model(Run& run);
void start_state_and_loader(Run& run);

void set_up(Run& run) {
  warn_about_slow_runtime();
  choose_start(run);
  open_data(run);
  build_model(run);
  start_state_and_loader(run);
  if (!run.opt.dump_batches_dir.empty()) {
    run.dump.emplace(run.opt.dump_batches_dir, run.start.resolved, run.trainer.accumulation, run.dist.world_size());
    run.dump->write_initial(*run.trainer.model, run.start.model_cfg);
    spdlog::info("[train] writing the initial weights and every update's batch to {}", run.opt.dump_batches_dir);
  }
  const auto& t = run.cfg.training;
  const Trainer& tr = run.trainer;
  int64_t n_params = 0;
  for (const auto& p : tr.model->parameters()) n_params += p.numel();
  if (run.dist.enabled())
    spdlog::info("[dist] {} processes ({}), global batch {} = {} per process x {} accumulation x {}",
                 run.dist.world_size(), run.dist.backend_name(), t.batch_size * tr.accumulation * run.dist.world_size(),
                 t.batch_size, tr.accumulation, run.dist.world_size());
  spdlog::info("[train] run {}: {} parameters ({} positional), {} on {}, {} {} steps of {}x{} examples, seq {}",
               run.run_dir, n_params, model::positional_parameter_count(run.start.model_cfg), tr.optimizer->kind(),
               run.device.str(), uses_bf16(t.precision) ? "bf16" : "fp32", t.steps, t.batch_size,
               tr.accumulation, run.cfg.data.max_seq_length);
}

// Where the weights come from decides the architecture (STYLE §8): the checkpoint to resume, the
// --init folder, or the config. Writes the resolved config.yaml and opens the metrics stream.
void choose_start(Run& run) {
  StartPoint& start = run.start;
  const auto& cfg = run.cfg;
  start.model_cfg = cfg.model;
  if (run.opt.resume) {
    const CheckpointInfo latest =
        run.ctx.resume_point("start without --resume, or pass the --run-dir of the run to continue");
    start.resume_from = latest.path;
    start.resume_step = latest.step;
    // A shorter run than the checkpoint is not a continuation: it would end past its own last step.
    if (cfg.training.steps < latest.step)
      throw Error(fmt::format("training.steps = {} is below the step of the checkpoint to resume ({}, step {}): "
                              "set training.steps to at least {}",
                              cfg.training.steps, latest.path, latest.step, latest.step));
    start.model_cfg =
        reconcile_model_config(model::read_hf_config(start.resume_from).model, cfg.model, start.resume_from);
  } else if (!run.opt.init_dir.empty()) {
    start.model_cfg =
        reconcile_model_config(model::read_hf_config(run.opt.init_dir).model, cfg.model, run.opt.init_dir);
  }
  start.resolved = cfg;
  start.resolved.model = start.model_cfg;
  // Absolute, so that the run's config.yaml still finds the data when loaded from the run folder.
  // The data's content identity is the record a resume compares: the folder may move, not change.
  if (!cfg.data.dataset.empty()) {
    start.resolved.data.dataset = stdfs::absolute(cfg.data.dataset).lexically_normal().string();
    start.resolved.data.dataset_identity = data::read_pretrain_header(cfg.data.dataset).identity;
  }
  const std::string run_config = run.run_dir + "/config.yaml";
  if (!start.resume_from.empty() && fs::exists(run_config)) {
    config::Config recorded = config::load_config(run_config);
    if (recorded.data.dataset_identity.empty()) {  // written before runs recorded their data
      spdlog::warn("[train] {} records no data.dataset_identity: the data of this resume cannot be checked",
                   run_config);
      recorded.data.dataset_identity = start.resolved.data.dataset_identity;
    }
    if (recorded.data.dataset_identity != start.resolved.data.dataset_identity)
      throw Error(fmt::format("--resume: the dataset {} is {}, but the run in {} was trained on {} (data.dataset_identity "
                              "in {}): resume with that data, or start a new run in another --run-dir",
                              cfg.data.dataset, start.resolved.data.dataset_identity, run.run_dir,
                              recorded.data.dataset_identity, run_config));
    if (!config::config_file_sets(run_config, "data.valid_seed"))  // written before the key: valid = training seed
      recorded.data.valid_seed = recorded.training.seed;
    check_resume_settings(recorded, start.resolved, run_config);
  }
  if (run.dist.is_main()) config::write_resolved_config(start.resolved, run_config);
  // The steps after the checkpoint are redone: their old records must not stay in the stream.
  run.ctx.describe_run({RunKind::kPretraining, start.resolved, std::nullopt});
  run.ctx.open_metrics(start.resume_from.empty() ? -1 : start.resume_step);
}

// The example-building options of the `data:` section; the seed is the run's.
data::ExampleOptions example_options(const config::DataConfig& d, uint64_t seed) {
  data::ExampleOptions o;
  o.max_seq_length = d.max_seq_length;
  o.max_predictions_per_seq = d.max_predictions_per_seq;
  o.masked_lm_prob = d.masked_lm_prob;
  o.short_seq_prob = d.short_seq_prob;
  o.max_ngram = d.max_ngram;
  o.static_masking = d.masking == config::MaskingMode::kStatic;
  o.dupe_factor = d.dupe_factor;
  o.seed = seed;
  return o;
}

// Data (SPEC §5): the dataset must fit the model's vocabulary; sizes that cannot fit in memory
// are refused before anything is allocated.
void open_data(Run& run) {
  const auto& cfg = run.cfg;
  const auto& t = cfg.training;
  if (cfg.data.dataset.empty()) throw Error("data.dataset: no dataset folder given (hint: run `tisa-train prepare pretrain` and set data.dataset)");
  run.data.dataset_dir = cfg.data.dataset;
  run.data.dataset = std::make_shared<const data::PretrainDataset>(cfg.data.dataset);
  const auto& tok = run.data.dataset->header().tokenizer;
  if (!run.opt.init_dir.empty())  // continued pretraining: the model's tokenizer must be the data's
    data::check_same_tokenizer(data::verified_model_identity(run.opt.init_dir), run.opt.init_dir, tok.identity,
                               run.data.dataset->header().tokenizer_files, "the dataset " + cfg.data.dataset);
  if (tok.vocab_size > run.start.model_cfg.vocab_size)
    throw Error("model.vocab_size is " + std::to_string(run.start.model_cfg.vocab_size) + " but the dataset " +
                cfg.data.dataset + " was tokenised with " + std::to_string(tok.vocab_size) +
                " ids (hint: --set model.vocab_size=" + std::to_string(tok.vocab_size) + ")");
  // Training examples follow the run's seed; validation examples data.valid_seed, so that two
  // pretraining draws (training.seed) are scored on the same validation examples.
  const auto examples = example_options(cfg.data, static_cast<uint64_t>(t.seed));
  const auto valid_examples = example_options(cfg.data, static_cast<uint64_t>(cfg.data.valid_seed));
  run.data.train_examples = std::make_shared<const data::ExampleBuilder>(run.data.dataset, "train", examples);
  run.data.valid_examples = std::make_shared<const data::ExampleBuilder>(run.data.dataset, "valid", valid_examples);
  // The weights are first built in host memory; the activations live on the CPU only when
  // training there.
  const auto need = estimate_training_memory(run.start.model_cfg, t.batch_size, cfg.data.max_seq_length,
                                             cfg.data.max_predictions_per_seq);
  MemoryEstimate host = need;
  if (run.device.is_cuda()) host.activation_bytes = 0, host.parameter_bytes = 4 * need.parameters;
  require_memory_fits(host, physical_memory_bytes(), "training.batch_size", t.batch_size, "data.max_seq_length",
                      cfg.data.max_seq_length);
}

// Model, optimiser, schedule, the update step and data parallelism. Weights are initialised from
// the seed, then overwritten by --init or the checkpoint; the generator state is restored later.
void build_model(Run& run) {
  Trainer& tr = run.trainer;
  const auto& cfg = run.cfg;
  const auto& t = cfg.training;
  torch::manual_seed(static_cast<uint64_t>(t.seed));
  tr.model = model::AlbertForPreTraining(run.start.model_cfg);
  tr.model->to(run.device);
  if (!run.start.resume_from.empty()) load_weights(tr.model, run.start.resume_from);
  else if (!run.opt.init_dir.empty()) load_weights(tr.model, run.opt.init_dir);
  optim::NamedParams params;
  for (const auto& p : tr.model->named_parameters(true)) params.emplace_back(p.key(), p.value());
  tr.optimizer = optim::make_optimizer(cfg.optimizer, std::move(params));
  tr.schedule = std::make_unique<optim::LrSchedule>(cfg.schedule, cfg.optimizer.lr,
                                                     optim::schedule_horizon(cfg.schedule, t.steps));
  tr.step_fn = std::make_unique<PretrainStep>(tr.model, *tr.optimizer, *tr.schedule, cfg.optimizer.clip_norm,
                                               run.device, t.precision);
  tr.step_fn->loss_hook = run.opt.loss_hook;
  tr.step_fn->dist = &run.dist;  // [dist] counts of the whole update (update_step.h)
  tr.step_fn->position_span = t.position_span;
  tr.step_fn->position_seed = static_cast<uint64_t>(t.seed);
  // [dist] every rank starts from rank 0's weights; gradients are summed in buckets (each rank's
  // loss is its share of the update's mean). The ranks must first agree on what they train
  // (model, optimiser, data, schedule: the resolved config). (The dataset path may be mounted at
  // different places on different machines: not compared.)
  config::Config compared = run.start.resolved;
  compared.data.dataset.clear();
  run.dist.require_same_on_all_ranks(fs::fnv1a64(config::dump_yaml(compared)), "the training settings");
  if (!run.dist.enabled()) return;
  std::vector<at::Tensor> state_tensors;
  for (const auto& p : tr.model->parameters()) state_tensors.push_back(p);
  for (const auto& b : tr.model->buffers()) state_tensors.push_back(b);
  run.dist.broadcast_tensors(state_tensors);
  tr.reducer = std::make_unique<GradientReducer>(run.dist, tr.model->parameters(),
                                                  GradientReducer::kDefaultBucketBytes, GradientReduction::kSum);
  tr.step_fn->reducer = tr.reducer.get();
}

// The checkpoint's optimiser state, training state and generators (on resume), the accumulation
// that keeps the global batch, and the training loader at the data position to continue from.
void start_state_and_loader(Run& run) {
  const auto& cfg = run.cfg;
  const auto& t = cfg.training;
  data::DataPosition start;
  if (!run.start.resume_from.empty()) {
    run.state = run.ctx.load_checkpoint(run.start.resume_from, *run.trainer.optimizer);  // optimiser, state, generators
    start = data::DataPosition::from_json(run.state.data_position);
    run.result.last_checkpoint = run.start.resume_from;
    if (run.state.last_eval_mlm_loss) run.last_eval_step = run.state.step;
    spdlog::info("[train] resuming {} at step {} (data epoch {} index {})", run.start.resume_from, run.state.step,
                 start.epoch, start.index);
  }
  data::LoaderOptions lo;
  lo.batch_size = t.batch_size;
  lo.workers = cfg.data.workers;
  lo.prefetch_batches = cfg.data.prefetch_batches;
  lo.rank = run.dist.rank();  // [dist] this rank's shard
  lo.world_size = run.dist.world_size();
  run.trainer.accumulation = resolve_accumulation(t, run.dist.world_size(), run.start.resume_from);
  run.data.loader = std::make_unique<data::PretrainBatchLoader>(run.data.train_examples, lo, start);
}

std::vector<data::PretrainBatch> next_micro_batches(Run& run) {
  std::vector<data::PretrainBatch> micro(static_cast<size_t>(run.trainer.accumulation));
  for (auto& b : micro)
    if (!run.data.loader->next(b)) throw Error("[data] the training loader ran out of batches (empty train split?)");
  return micro;
}

void handle_bad_step(Run& run, const UpdateResult& r) {
  run.result.train_losses.push_back(r.applied ? r.loss : std::nan(""));
  run.ctx.count_update(run.state, r.applied, r.loss, r.grad_norm, run.cfg.training.max_bad_steps, "train");
  if (!r.applied) return;
  run.state.tokens_seen += r.tokens;
  run.state.lr = r.lr;
}

void log_step(Run& run, const UpdateResult& r) {
  LogWindow& w = run.window;
  if (r.applied) {
    w.loss += r.loss, w.mlm += mlm_loss(r), w.sop += sop_loss(r);
    ++w.steps;
  }
  w.tokens += r.tokens;
  const int64_t step = run.state.step;
  if (!due(step, run.cfg.training.log_interval, run.cfg.training.steps) || w.steps == 0) return;
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - w.start).count();
  const double n = static_cast<double>(w.steps), tok_s = seconds > 0 ? w.tokens / seconds : 0.0;
  spdlog::info("[train] step {} loss {:.4f} mlm {:.4f} sop {:.4f} lr {:.3e} grad_norm {:.3f} tok/s {:.0f}", step,
               w.loss / n, w.mlm / n, w.sop / n, r.lr, r.grad_norm, tok_s);
  run.ctx.metrics().write("train", step, {{"loss", w.loss / n}, {"mlm_loss", w.mlm / n},
                                     {"sop_loss", w.sop / n}, {"lr", r.lr}, {"grad_norm", r.grad_norm},
                                     {"tokens_per_s", tok_s}, {"tokens_seen", run.state.tokens_seen}});
  w.loss = w.mlm = w.sop = 0;
  w.steps = w.tokens = 0;
  w.start = now;
}

void run_evaluation(Run& run) {
  const auto& t = run.cfg.training;
  run.last_eval_step = run.state.step;
  if (run.data.dataset->split("valid").num_documents() == 0) {
    spdlog::warn("[eval] the dataset has no valid split: skipping evaluation");
    return;
  }
  data::LoaderOptions lo;
  lo.batch_size = t.batch_size;
  lo.workers = 0;  // build in this thread: evaluation is short and must not compete with training workers
  lo.loop = false;
  lo.rank = run.dist.rank();  // [dist] ranks evaluate disjoint shards of the same slots, summed below
  lo.world_size = run.dist.world_size();
  data::PretrainBatchLoader loader(run.data.valid_examples, lo, data::DataPosition{});
  // [dist] each rank reads ceil(eval_batches / world) batches of its shard: the same slots as one process.
  const int64_t w = run.dist.world_size();
  const int64_t batches = t.eval_batches > 0 ? (t.eval_batches + w - 1) / w : 0;
  EvalResult e = reduce_eval_result(run.dist, evaluate(run.trainer.model, loader, batches, run.device, t.precision));
  run.state.last_eval_mlm_loss = e.mlm_loss;
  run.result.last_eval = e;
  if (!std::isfinite(e.mlm_loss))
    spdlog::warn("[eval] step {}: the validation MLM loss is {}; this step cannot become the best checkpoint",
                 run.state.step, e.mlm_loss);
  spdlog::info("[eval] step {} mlm_loss {:.4f} mlm_acc {:.4f} sop_loss {:.4f} sop_acc {:.4f} ({} examples)",
               run.state.step, e.mlm_loss, e.mlm_accuracy, e.sop_loss, e.sop_accuracy, e.examples);
  nlohmann::json values = {{"mlm_loss", e.mlm_loss}, {"mlm_accuracy", e.mlm_accuracy},
                            {"sop_loss", e.sop_loss},  {"sop_accuracy", e.sop_accuracy},
                            {"examples", e.examples},  {"predictions", e.predictions}};
  // Paper §3: the translation invariance of the absolute table grows during training; log it at
  // every evaluation (models without an absolute table have nothing to measure).
  const int64_t n = std::min(run.start.model_cfg.max_position_embeddings, run.cfg.data.max_seq_length);
  if (auto tau = analysis::model_position_invariance(*run.trainer.model, run.start.model_cfg.num_attention_heads, n)) {
    values.update(analysis::to_json(*tau));
    spdlog::info("[eval] step {} tau_gram {:.4f} tau_heads_mean {:.4f}", run.state.step, tau->tau_gram,
                 tau->tau_heads_mean);
  }
  run.ctx.metrics().write("eval", run.state.step, values);
}

// What the model in `dir` was made from: the dataset's tokenizer and identity (data/model_identity.h).
void write_model_identity(const Run& run, const std::string& dir) {
  const auto& header = run.data.dataset->header();
  data::write_model_identity(dir, header.tokenizer.identity, header.identity,
                             data::MaskingRecord{run.cfg.data.masked_lm_prob, run.cfg.data.max_ngram});
}

void save_checkpoint(Run& run) {
  if (!run.dist.is_main()) return;  // [dist] rank 0 writes; the replicas are identical
  auto& s = run.state;
  if (run.last_eval_step != s.step) s.last_eval_mlm_loss.reset();
  // NaN is never a result: a non-finite evaluation cannot become the best step.
  if (s.last_eval_mlm_loss && std::isfinite(*s.last_eval_mlm_loss) &&
      (!s.best_eval_mlm_loss || *s.last_eval_mlm_loss < *s.best_eval_mlm_loss)) {
    s.best_eval_mlm_loss = s.last_eval_mlm_loss;
    s.best_step = s.step;
  }
  for (const auto& [name, type] : config::kScheduleTypeNames)
    if (type == run.cfg.schedule.type) s.schedule = name;
  const auto& t = run.cfg.training;
  run.result.last_checkpoint = run.ctx.save_checkpoint(
      s, *run.trainer.optimizer,
      [&](const std::string& dir) {
        model::save_hf_model(dir, *run.trainer.model, run.start.model_cfg, model::kPretrainingArchitecture);
        write_model_identity(run, dir);
        write_data_parallel_record(dir, {run.dist.world_size(), t.batch_size, run.trainer.accumulation});  // [dist]
      },
      t.keep_checkpoints, s.best_step >= 0 ? std::optional<int64_t>(s.best_step) : std::nullopt);
}

void write_final_model(Run& run) {
  if (!run.dist.is_main()) return;  // [dist]
  const std::string dir = run.run_dir + "/final";
  model::save_hf_model(dir, *run.trainer.model, run.start.model_cfg, model::kPretrainingArchitecture);
  copy_dataset_tokenizer(run.data.dataset_dir, dir);
  write_model_identity(run, dir);
  run.result.final_dir = dir;
  spdlog::info("[train] done: {} steps, final model in {}", run.state.step, dir);
}

// The last evaluation as the run's result ("final" record; the TensorBoard hparams metrics).
void write_final_metrics(Run& run) {
  nlohmann::json values = nlohmann::json::object();
  if (const auto& e = run.result.last_eval)
    values = {{"mlm_loss", e->mlm_loss}, {"mlm_accuracy", e->mlm_accuracy}, {"sop_loss", e->sop_loss},
              {"sop_accuracy", e->sop_accuracy}};
  run.ctx.write_final_metrics(run.state.step, values);
}

}  // namespace

std::vector<std::string> copy_dataset_tokenizer(const std::string& dataset_dir, const std::string& dst_dir) {
  fs::create_directories(dst_dir);
  auto copied = model::copy_tokenizer_files(dataset_dir, dst_dir);
  if (!copied.empty()) return copied;
  // Not in the folder: follow the path `prepare pretrain` recorded (as given then: absolute, or
  // relative to where it ran or to the dataset's parent folder).
  const auto header = data::read_pretrain_header(dataset_dir);
  const std::string recorded = header.created.value("tokenizer_path", "");
  std::vector<std::string> candidates = {recorded};
  if (!recorded.empty() && stdfs::path(recorded).is_relative())
    candidates.push_back((stdfs::path(dataset_dir).parent_path() / recorded).string());
  for (const auto& path : candidates) {
    if (path.empty() || !fs::exists(path)) continue;
    if (stdfs::is_directory(path)) return model::copy_tokenizer_files(path, dst_dir);
    const std::string name = header.tokenizer.type == "wordpiece" ? "vocab.txt" : "spiece.model";
    fs::write_file_atomic(dst_dir + "/" + name, fs::read_file(path));
    return {name};
  }
  spdlog::warn("[train] the tokenizer of {} was not found (recorded path '{}'); copy it into {} by hand",
               dataset_dir, recorded, dst_dir);
  return {};
}

}  // namespace tisa::train
