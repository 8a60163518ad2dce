// `glue`, `eval` and `predict` orchestration (see glue_runner.h).
#include "glue/glue_runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/fs.h"
#include "common/output_guard.h"
#include "common/run_directory.h"
#include "common/subprocess.h"
#include "config/config_loader.h"
#include "data/glue_dataset.h"
#include "data/glue_tsv.h"
#include "data/model_identity.h"
#include "glue/finetune.h"
#include "glue/glue_eval.h"
#include "glue/glue_model.h"
#include "glue/glue_resume.h"
#include "glue/glue_tasks.h"
#include "glue/seed_summary.h"
#include "train/checkpoint.h"
#include "train/distributed.h"
#include "train/precision_choice.h"
#include "train/runtime_info.h"

namespace tisa::glue {
namespace {

namespace stdfs = std::filesystem;

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

c10::Device parse_device(const std::string& name) {
  if (name == "cpu") return c10::Device(c10::DeviceType::CPU);
  if (name == "cuda") {
    if (!torch::cuda::is_available()) throw Error("--device cuda: CUDA is not available");
    return c10::Device(c10::DeviceType::CUDA, 0);
  }
  throw Error("--device: expected cpu or cuda, got '" + name + "'");
}

// Max length recorded by the fine-tuning in config.json ("tisa_train_glue": {"max_length"}).
int64_t recorded_max_length(const std::string& model_dir) {
  try {
    auto j = nlohmann::json::parse(fs::read_file((stdfs::path(model_dir) / "config.json").string()));
    if (j.contains("tisa_train_glue") && j["tisa_train_glue"].contains("max_length"))
      return j["tisa_train_glue"]["max_length"].get<int64_t>();
  } catch (const std::exception&) {
  }
  return 128;
}

// Default cache folder for eval/predict data: under the user's own cache directory
// ($XDG_CACHE_HOME, else ~/.cache)/tisa-train/glue/, not a shared temp dir where anyone can
// plant a folder of a predictable name; keyed by what decides it. `prepare glue` reuses its
// content only when the input files' and the split files' hashes match (prep/glue_prepare.cpp).
std::string default_cache_dir(const std::string& task, const std::string& what, const std::string& model_dir,
                              int64_t max_length) {
  std::string key = what + "\n" + stdfs::weakly_canonical(find_tokenizer(model_dir)).string() + "\n" +
                    std::to_string(max_length);
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  stdfs::path root;
  if (xdg && *xdg) root = xdg;
  else if (home && *home) root = stdfs::path(home) / ".cache";
  else throw Error("neither XDG_CACHE_HOME nor HOME is set: pass --cache-dir for the tokenised data");
  return (root / "tisa-train" / "glue" / (task + "-" + fs::to_hex(fs::fnv1a64(key)))).string();
}

// --max-length of eval/predict (0 = as recorded by the fine-tuning), within the model's positions.
int64_t checked_max_length(int64_t given, const std::string& model_dir, const GlueModel& model) {
  const int64_t max_length = given > 0 ? given : recorded_max_length(model_dir);
  if (max_length > model.max_positions())
    throw Error("--max-length " + std::to_string(max_length) + " exceeds the " + std::to_string(model.max_positions()) +
                " positions of the model in " + model_dir + " (max_position_embeddings)");
  return max_length;
}

std::string resolve_task(const std::string& given, const std::string& model_dir) {
  std::string recorded = recorded_task(model_dir);
  if (given.empty()) {
    if (recorded.empty())
      throw Error(model_dir + "/config.json records no finetuning_task: pass --task");
    return glue_task(recorded).name;
  }
  const std::string name = glue_task(given).name;
  if (!recorded.empty() && glue_task(recorded).name != name)
    spdlog::warn("[glue] --task {} differs from the task the model was fine-tuned on ({})", name, recorded);
  return name;
}

// One fine-tuning of `task` with `seed` into `seed_dir`; with --resume, a finished one is read back
// and an unfinished one continues from its newest checkpoint (a fresh start when it has none).
FinetuneResult run_one_seed(const GlueRunOptions& opt, FinetuneRequest req) {
  if (opt.resume) {
    if (auto done = read_finetune_result(req.run_dir)) {
      spdlog::info("[glue] {} seed {}: finished earlier ({}/results.json)", req.task, req.seed, req.run_dir);
      return *done;
    }
    req.resume = train::CheckpointStore((stdfs::path(req.run_dir) / "checkpoints").string()).latest_valid().has_value();
  }
  return run_finetune(req);
}

// A seed's run folder inside its task's folder.
std::string seed_dir(const std::string& task_dir, int64_t seed) {
  return (stdfs::path(task_dir) / ("seed-" + std::to_string(seed))).string();
}

// The seeds of one task: every seed's metrics, and the seed whose main metric is best.
struct SeedResults {
  std::map<int64_t, std::map<std::string, double>> metrics;  // by seed
  nlohmann::json per_seed = nlohmann::json::array();   // seed, best_step, metrics, run_dir
  std::string main_metric;
  std::string best_run;  // run folder of the best seed ("" when no seed computed the main metric)
  double best_value = -std::numeric_limits<double>::infinity();
};

// Fine-tunes `task` once per seed (each in <task_dir>/seed-<s>). Returns nullopt when a
// fine-tuning was interrupted (its checkpoint is saved).
std::optional<SeedResults> run_seeds(const GlueRunOptions& opt, const std::string& task, const config::Config& cfg,
                                     const std::vector<int64_t>& seeds, const std::string& task_dir,
                                     const std::string& data_dir) {
  SeedResults out;
  for (int64_t seed : seeds) {
    FinetuneRequest req;
    req.task = task;
    req.prepared_dir = data_dir;
    req.init_dir = opt.init_dir;
    req.config = cfg;
    req.config.training.seed = seed;
    req.seed = seed;
    req.run_dir = seed_dir(task_dir, seed);
    FinetuneResult r = run_one_seed(opt, req);
    if (r.exit_code != kExitOk) return std::nullopt;
    out.metrics[seed] = r.metrics;
    out.main_metric = r.main_metric;
    out.per_seed.push_back(
        {{"seed", seed}, {"best_step", r.best_step}, {"metrics", r.metrics}, {"run_dir", req.run_dir}});
    auto it = r.metrics.find(r.main_metric);
    if (it != r.metrics.end() && (out.best_run.empty() || it->second > out.best_value)) {
      out.best_value = it->second;
      out.best_run = req.run_dir;
    }
  }
  return out;
}

// The glue.* settings in one log line, so that a run's log shows what it trained with.
void log_settings(const std::string& task, const config::Config& cfg, const std::string& source) {
  const auto& g = cfg.glue;
  spdlog::info("[glue] {}: lr {} batch_size {} steps {} warmup_steps {} max_length {} weight_decay {} "
               "classifier_dropout {} (from {}; every setting in seed-*/config.yaml)",
               task, g.lr, g.batch_size, g.steps, g.warmup_steps, g.max_length, g.weight_decay,
               g.classifier_dropout, source);
}

// Returns nullopt when a fine-tuning was interrupted (its checkpoint is saved).
std::optional<nlohmann::json> run_one_task(const GlueRunOptions& opt, const std::string& task,
                                           const std::string& run_dir, std::string* leaderboard_source) {
  std::string source;
  config::Config cfg = task_config(task, opt.config_path, opt.overrides, &source);
  cfg.glue.task = task;
  log_settings(task, cfg, source);
  const std::string task_dir = (stdfs::path(run_dir) / task).string();
  const std::string data_dir = (stdfs::path(task_dir) / "data").string();
  // [dist] rank 0 tokenises into the shared folder while the other ranks wait.
  const c10::Device device = cfg.training.device == config::Device::kCuda ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
  train::Distributed& dist = train::process_group(train::rank_device(device));
  // precision: auto becomes bf16 or fp32 once per task; every seed's config.yaml records it.
  cfg.training.precision = train::choose_precision(cfg.training.precision, device, "[glue]");
  cfg.glue.init = stdfs::weakly_canonical(opt.init_dir).string();
  cfg.glue.init_identity = init_identity(opt.init_dir);
  const std::vector<int64_t> seeds = opt.seeds.empty() ? std::vector<int64_t>{cfg.training.seed} : opt.seeds;
  // --resume: every seed started earlier must continue with its recorded settings and model,
  // checked before the data is tokenised again.
  if (opt.resume)
    for (int64_t seed : seeds) {
      config::Config requested = cfg;
      requested.training.seed = seed;
      check_glue_resume(seed_dir(task_dir, seed), requested);
    }
  dist.main_first([&] { prepare_task_data(task, opt.data_dir, "", opt.init_dir, cfg.glue.max_length, data_dir); },
                  "tokenising " + task);

  std::optional<SeedResults> r = run_seeds(opt, task, cfg, seeds, task_dir, data_dir);
  if (!r) return std::nullopt;
  auto summary = summarize_runs(r->metrics);
  // [dist] rank 0 prints the summary table.
  if (dist.is_main()) std::printf("%s", format_summary_table(task + " (" + std::to_string(seeds.size()) + " seed" +
                                             (seeds.size() == 1 ? "" : "s") + ", main metric " + r->main_metric + ")",
                                         summary)
                        .c_str());
  std::fflush(stdout);
  nlohmann::json out = {{"task", task},
                        {"main_metric", r->main_metric},
                        {"seeds", seeds},
                        {"runs", r->per_seed},
                        {"summary", summary_to_json(summary)},
                        {"best_run", r->best_run},
                        {"config_source", source},
                        {"settings", config::config_to_json(cfg)["glue"]}};
  if (dist.is_main()) fs::write_file_atomic((stdfs::path(task_dir) / "results.json").string(), out.dump(2) + "\n");
  *leaderboard_source = r->best_run;
  return out;
}

}  // namespace

std::vector<std::string> task_default_overrides(const std::string& task) {
  // The task table's row (data/glue_tsv.cpp); every other glue.* default is config.h's GlueConfig.
  const data::GlueTask& t = data::find_glue_task(glue_task(task).name);
  char lr[32];
  std::snprintf(lr, sizeof(lr), "%.17g", t.defaults.lr);  // round-trips exactly
  return {"glue.task=" + t.name, std::string("glue.lr=") + lr,
          "glue.batch_size=" + std::to_string(t.defaults.batch_size), "glue.steps=" + std::to_string(t.defaults.steps),
          "glue.warmup_steps=" + std::to_string(t.defaults.warmup_steps)};
}

config::Config task_config(const std::string& task, const std::string& config_path,
                           const std::vector<std::string>& overrides, std::string* source) {
  if (!config_path.empty()) {
    *source = config_path;
    return config::load_config(config_path, overrides);
  }
  *source = "the GLUE task table (ALBERT's " + glue_task(task).name + " settings)" +
            (overrides.empty() ? "" : " and --set");
  auto all = task_default_overrides(task);
  all.insert(all.end(), overrides.begin(), overrides.end());
  return config::config_from_overrides(all);
}

std::string describe_task_config(const std::string& task, const std::string& config_path,
                                 const std::vector<std::string>& overrides) {
  std::string source;
  config::Config cfg = task_config(task, config_path, overrides, &source);
  cfg.glue.task = glue_task(task).name;
  return "# tisa-train glue --task " + cfg.glue.task + ": effective settings (from " + source + ")\n" +
         config::dump_yaml(cfg);
}

bool task_data_present(const std::string& data_dir, const std::string& task) {
  const data::GlueTask& t = data::find_glue_task(glue_task(task).name);
  return stdfs::is_regular_file(data::glue_tsv_path(data_dir, t.name, "train")) &&
         stdfs::is_regular_file(data::glue_tsv_path(data_dir, t.name, t.main_dev_split().name));
}

void prepare_task_data(const std::string& task, const std::string& data_dir, const std::string& input_tsv,
                       const std::string& model_dir, int64_t max_length, const std::string& out_dir) {
  // The tokenizer beside the model must be the one it was trained with (a replaced spiece.model).
  data::verified_model_identity(model_dir);
  std::vector<std::string> argv = {sibling_executable("tisa-text"), "prepare", "glue", "--task", task,
                                   "--tokenizer", find_tokenizer(model_dir), "--output", out_dir,
                                   "--max-length", std::to_string(max_length)};
  if (input_tsv.empty()) {
    argv.insert(argv.end(), {"--data-dir", data_dir});
  } else {
    argv.insert(argv.end(), {"--input", input_tsv});
  }
  const std::string lower = recorded_lowercase(model_dir);
  if (!lower.empty()) argv.insert(argv.end(), {"--lowercase", lower});
  spdlog::info("[data] {}", join(argv, " "));
  run_child_checked(argv);
}

namespace {

// The tasks to fine-tune: one, or with `all` every task with train and dev files (the others go
// to *skipped).
std::vector<std::string> tasks_to_run(const GlueRunOptions& opt, std::vector<std::string>* skipped) {
  std::vector<std::string> tasks;
  if (opt.task != "all" && opt.task != "ALL") {
    tasks.push_back(glue_task(opt.task).name);
    if (!task_data_present(opt.data_dir, tasks[0]))
      throw Error(opt.data_dir + "/" + tasks[0] + ": train.tsv and " +
                  data::find_glue_task(tasks[0]).main_dev_split().file + " are needed to fine-tune " + tasks[0]);
    return tasks;
  }
  for (const auto& t : glue_task_names()) (task_data_present(opt.data_dir, t) ? tasks : *skipped).push_back(t);
  if (tasks.empty())
    throw Error("--task all: no GLUE task has train and dev files under " + opt.data_dir + " (expected e.g. " +
                opt.data_dir + "/SST-2/train.tsv and dev.tsv)");
  spdlog::info("[glue] tasks: {}{}", join(tasks, ", "),
               skipped->empty() ? "" : "; skipped (no data): " + join(*skipped, ", "));
  return tasks;
}

// The run folder: --run-dir, or a new runs/glue-<date>-<time>. Rank 0 owns it (common/
// run_directory.h): one process at a time, and a task that already has results there is not
// replaced without --overwrite. Other tasks' results in the same folder stay
// (scripts/reproduce_paper.sh adds one task at a time).
std::string open_run_dir(const GlueRunOptions& opt, const std::vector<std::string>& tasks,
                         std::optional<RunDirectory>* owner) {
  // [dist] ranks would pick different timestamps: several processes need an explicit --run-dir.
  const train::DistEnv dist_env = train::DistEnv::from_environment();
  if (opt.run_dir.empty() && opt.resume) throw Error("glue --resume: pass the --run-dir of the run to continue");
  if (opt.run_dir.empty() && dist_env.distributed())
    throw Error("glue: with several processes (WORLD_SIZE=" + std::to_string(dist_env.world_size) + ") pass --run-dir");
  if (dist_env.rank != 0) return opt.run_dir;
  const std::string run_dir = opt.run_dir.empty() ? create_unique_run_dir("runs", "glue") : opt.run_dir;
  owner->emplace(run_dir, opt.resume ? RunDirectory::Start::kContinue : RunDirectory::Start::kNew);
  if (!opt.resume)
    for (const auto& task : tasks) (*owner)->start_fresh(task, glue_task_layout(), opt.overwrite);
  return run_dir;
}

// The run's results.json to start from: the summaries of other tasks already in it are kept.
nlohmann::json results_of_other_tasks(const std::string& results_path, const std::vector<std::string>& tasks) {
  nlohmann::json kept = nlohmann::json::object();
  if (!fs::exists(results_path)) return kept;
  auto previous = nlohmann::json::parse(fs::read_file(results_path), nullptr, /*allow_exceptions=*/false);
  if (previous.is_object() && previous.contains("tasks") && previous["tasks"].is_object())
    for (auto it = previous["tasks"].begin(); it != previous["tasks"].end(); ++it)
      if (std::find(tasks.begin(), tasks.end(), it.key()) == tasks.end()) kept[it.key()] = it.value();
  return kept;
}

// Copies the leaderboard files of a task's best seed into the run's leaderboard/ (AX.tsv comes
// with MNLI). Returns how many it copied (none when no seed has a best model or test files).
size_t collect_leaderboard_files(const std::string& best_run, const std::string& lb_dir) {
  const stdfs::path src = stdfs::path(best_run) / "leaderboard";
  if (best_run.empty() || !stdfs::is_directory(src)) return 0;
  fs::create_directories(lb_dir);
  size_t copied = 0;
  for (const auto& e : stdfs::directory_iterator(src)) {
    stdfs::copy_file(e.path(), stdfs::path(lb_dir) / e.path().filename(), stdfs::copy_options::overwrite_existing);
    ++copied;
  }
  return copied;
}

void print_glue_summary(const std::vector<std::string>& tasks, const std::vector<std::string>& skipped,
                        const nlohmann::json& all_results) {
  std::printf("\nGLUE summary (main metric, mean over seeds):\n");
  for (const auto& task : tasks) {
    const auto& r = all_results["tasks"][task];
    const std::string mm = r["main_metric"].get<std::string>();
    if (r["summary"].contains(mm))
      std::printf("  %-6s %-24s %.4f\n", task.c_str(), mm.c_str(), r["summary"][mm]["mean"].get<double>());
  }
  for (const auto& s : skipped) std::printf("  %-6s skipped (no data)\n", s.c_str());
}

// --print-config: each task's effective settings, nothing else (no data or model needed).
int print_task_configs(const GlueRunOptions& opt) {
  const bool all = opt.task == "all" || opt.task == "ALL";
  const std::vector<std::string> tasks = all ? glue_task_names() : std::vector<std::string>{glue_task(opt.task).name};
  for (size_t i = 0; i < tasks.size(); ++i)
    std::printf("%s%s", i ? "---\n" : "", describe_task_config(tasks[i], opt.config_path, opt.overrides).c_str());
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace

int run_glue_command(const GlueRunOptions& opt) {
  if (opt.print_config) return print_task_configs(opt);
  check_distinct_seeds(opt.seeds);  // before the run folder: a repeated seed would train one folder twice
  train::warn_about_slow_runtime();
  if (!stdfs::is_directory(opt.data_dir)) throw Error("--data-dir " + opt.data_dir + " is not a folder");
  if (!stdfs::is_directory(opt.init_dir)) throw Error("--init " + opt.init_dir + " is not a folder");
  find_tokenizer(opt.init_dir);  // fail early when the model folder has no tokenizer
  std::vector<std::string> skipped;
  const std::vector<std::string> tasks = tasks_to_run(opt, &skipped);
  std::optional<RunDirectory> owner;  // held by rank 0 until the end
  const std::string run_dir = open_run_dir(opt, tasks, &owner);
  const bool main_rank = owner.has_value();  // [dist] rank 0 writes results and prints
  const std::string lb_dir = (stdfs::path(run_dir) / "leaderboard").string();
  const std::string results_path = (stdfs::path(run_dir) / "results.json").string();

  nlohmann::json all_results = {{"tasks", nlohmann::json::object()}, {"skipped", skipped}, {"init", opt.init_dir}};
  if (main_rank) all_results["tasks"] = results_of_other_tasks(results_path, tasks);
  size_t leaderboard_files = 0;  // written by this command (the message names the folder only then)
  for (const auto& task : tasks) {
    std::string best_run;
    auto task_results = run_one_task(opt, task, run_dir, &best_run);
    if (!task_results) return kExitInterrupted;  // checkpoint saved; `--resume` continues
    all_results["tasks"][task] = *task_results;
    if (!main_rank) continue;
    leaderboard_files += collect_leaderboard_files(best_run, lb_dir);
    fs::write_file_atomic(results_path, all_results.dump(2) + "\n");
  }
  if (tasks.size() > 1 && main_rank) print_glue_summary(tasks, skipped, all_results);
  if (leaderboard_files > 0)
    spdlog::info("[glue] results in {}/results.json; {} leaderboard file(s) in {}", run_dir, leaderboard_files, lb_dir);
  else
    spdlog::info("[glue] results in {}/results.json; no leaderboard files (no test split with a best model)", run_dir);
  return kExitOk;
}

int run_eval_command(const EvalOptions& opt) {
  const std::string task_name = resolve_task(opt.task, opt.model_dir);
  const GlueTaskInfo& task = glue_task(task_name);
  const std::string path = opt.output.empty() ? (stdfs::path(opt.model_dir) / "eval_results.json").string() : opt.output;
  std::vector<std::string> inputs = model_folder_inputs(opt.model_dir);
  for (const auto& split : task.dev_splits) inputs.push_back(data::glue_tsv_path(opt.data_dir, task.name, split));
  if (stdfs::is_directory(path))
    throw Error("--output " + path + " is a folder; expected the path of the metrics file (e.g. " +
                (stdfs::path(path) / "eval_results.json").string() + ")");
  check_output_is_not_input("--output", path, inputs);
  const c10::Device device = parse_device(opt.device);
  GlueModel model(opt.model_dir, task, -1.0, device);  // before tokenising: a model without a head is refused
  const int64_t max_length = checked_max_length(opt.max_length, opt.model_dir, model);
  const std::string data_key = stdfs::weakly_canonical(opt.data_dir).string();
  const std::string cache =
      opt.cache_dir.empty() ? default_cache_dir(task.name, data_key, opt.model_dir, max_length) : opt.cache_dir;
  prepare_task_data(task.name, opt.data_dir, "", opt.model_dir, max_length, cache);
  check_data_fits_model(model, opt.model_dir, cache);
  nlohmann::json per_split = nlohmann::json::object();
  std::map<std::string, double> flat;
  for (const auto& split_name : task.dev_splits) {
    auto split = data::read_glue_split(data::glue_split_path(cache, split_name));
    auto predictions = predict_split(model, split, opt.batch_size, device);
    auto metrics = split_metrics(task, predictions, split);
    per_split[split_name] = metrics;
    per_split[split_name]["examples"] = split.size();
    for (const auto& [name, value] : metrics) {
      flat[name] = value;
      std::printf("%s %-16s %-14s %.4f\n", task.name.c_str(), split_name.c_str(), name.c_str(), value);
    }
  }
  std::fflush(stdout);
  nlohmann::json out = {{"task", task.name},
                        {"model", opt.model_dir},
                        {"data_dir", opt.data_dir},
                        {"max_length", max_length},
                        {"main_metric", task.main_metric},
                        {"metrics", flat},
                        {"splits", per_split}};
  fs::write_file_atomic(path, out.dump(2) + "\n");
  spdlog::info("[eval] metrics written to {}", path);
  return kExitOk;
}

int run_predict_command(const PredictOptions& opt) {
  const std::string task_name = resolve_task(opt.task, opt.model_dir);
  const GlueTaskInfo& task = glue_task(task_name);
  if (!stdfs::is_regular_file(opt.input)) throw Error("--input " + opt.input + " is not a file");
  // Before the model is loaded and the input tokenised: the output must be a file's path.
  if (stdfs::is_directory(opt.output))
    throw Error("--output " + opt.output + " is a folder; expected the path of the predictions file (e.g. " +
                (stdfs::path(opt.output) / (task.name + ".tsv")).string() + ")");
  std::vector<std::string> inputs = model_folder_inputs(opt.model_dir);
  inputs.push_back(opt.input);
  check_output_is_not_input("--output", opt.output, inputs);
  const c10::Device device = parse_device(opt.device);
  GlueModel model(opt.model_dir, task, -1.0, device);  // before tokenising: a model without a head is refused
  const int64_t max_length = checked_max_length(opt.max_length, opt.model_dir, model);
  const std::string input_key = stdfs::weakly_canonical(opt.input).string();
  const std::string cache = opt.cache_dir.empty()
                                ? default_cache_dir(task.name, "predict\n" + input_key, opt.model_dir, max_length)
                                : opt.cache_dir;
  prepare_task_data(task.name, "", opt.input, opt.model_dir, max_length, cache);
  check_data_fits_model(model, opt.model_dir, cache);
  auto split = data::read_glue_split(data::glue_split_path(cache, "input"));
  auto predictions = predict_split(model, split, opt.batch_size, device);
  write_prediction_file(opt.output, task, split, predictions);
  spdlog::info("[predict] {} {} predictions written to {}", split.size(), task.name, opt.output);
  if (split.has_labels) {
    for (const auto& [name, value] : split_metrics(task, predictions, split))
      std::printf("%s input %-14s %.4f\n", task.name.c_str(), name.c_str(), value);
    std::fflush(stdout);
  }
  return kExitOk;
}

}  // namespace tisa::glue
