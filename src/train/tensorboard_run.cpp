// A run's TensorBoard folder; see tensorboard_run.h.
#include "train/tensorboard_run.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <set>
#include <sstream>

#include "config/config_loader.h"
#include "data/glue_tsv.h"
#include "io/tensorboard_writer.h"

namespace tisa::train {
namespace {

namespace tb = io::tensorboard;

// Appends the numbers of `value` under `tag` (objects: tag/key, arrays: tag/i).
void add_numbers(const std::string& tag, const nlohmann::json& value, std::vector<tb::Scalar>& out) {
  if (value.is_number()) out.push_back({tag, value.get<double>()});
  else if (value.is_null()) out.push_back({tag, std::numeric_limits<double>::quiet_NaN()});
  else if (value.is_object())
    for (auto it = value.begin(); it != value.end(); ++it) add_numbers(tag + "/" + it.key(), it.value(), out);
  else if (value.is_array())
    for (size_t i = 0; i < value.size(); ++i) add_numbers(tag + "/" + std::to_string(i), value[i], out);
}

// Config JSON flattened to "section.key" hyper-parameters; a list becomes its JSON text.
void add_hparams(const std::string& prefix, const nlohmann::json& value, std::vector<tb::HParam>& out) {
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it)
      add_hparams(prefix.empty() ? it.key() : prefix + "." + it.key(), it.value(), out);
  } else if (value.is_boolean()) {
    out.push_back({prefix, value.get<bool>()});
  } else if (value.is_number()) {
    out.push_back({prefix, value.get<double>()});
  } else if (value.is_string()) {
    out.push_back({prefix, value.get<std::string>()});
  } else {
    out.push_back({prefix, value.dump()});
  }
}

// The config as Markdown: an indented (code) block keeps YAML's layout.
std::string config_markdown(const config::Config& cfg) {
  std::istringstream in(config::dump_yaml(cfg));
  std::string out, line;
  while (std::getline(in, line)) out += "    " + line + "\n";
  return out;
}

constexpr const char* kConfigTag = "config";  // the resolved config as text

const char* kind_name(RunKind kind) { return kind == RunKind::kGlue ? "glue" : "pretrain"; }

}  // namespace

std::string scalar_tag(RunKind kind, const std::string& event, const std::string& key) {
  if (event == "eval" && kind == RunKind::kGlue) return "glue/" + key;
  if (event == "eval" && key.rfind("tau", 0) == 0) return "analysis/" + key;  // position invariance (paper §3)
  return event + "/" + key;
}

std::vector<tb::Scalar> record_scalars(RunKind kind, const std::string& event, const nlohmann::json& values) {
  std::vector<tb::Scalar> out;
  for (auto it = values.begin(); it != values.end(); ++it)
    add_numbers(scalar_tag(kind, event, it.key()), it.value(), out);
  return out;
}

std::vector<tb::HParam> run_hparams(const TensorBoardRunInfo& run) {
  std::vector<tb::HParam> out = {{"run.kind", std::string(kind_name(run.kind))}};
  config::Config cfg = run.config;
  if (run.trained_model) cfg.model = *run.trained_model;
  add_hparams("", config::config_to_json(cfg), out);
  return out;
}

std::vector<std::string> hparams_metric_tags() {
  std::vector<std::string> tags = {"final/mlm_loss", "final/mlm_accuracy", "final/sop_loss", "final/sop_accuracy"};
  std::set<std::string> glue;  // every key a GLUE task's dev evaluation reports
  for (const auto& task : data::glue_tasks()) {
    if (!task.trainable()) continue;
    for (const auto& split : task.splits)
      for (auto metric : task.metrics) glue.insert(task.metric_key(metric, task.split_metric_task(split)));
  }
  for (const auto& key : glue) tags.push_back("final/" + key);
  tags.push_back("final/best_step");
  return tags;
}

TensorBoardRun::TensorBoardRun(const std::string& dir, const TensorBoardRunInfo& run, int64_t resume_step,
                               const std::vector<MetricsRecord>& kept)
    : kind_(run.kind) {
  std::vector<std::pair<int64_t, std::vector<tb::Scalar>>> missing;  // kept records' scalars the events lack
  if (resume_step >= 0) {
    // The config text and the hparams session are written anew: a resume may change the settings
    // config.yaml allows to change (training.steps, intervals), and TensorBoard keeps only the
    // first of each tag's metadata.
    const auto have = io::TensorBoardWriter::drop_events_after(
        dir, resume_step, {tb::kSessionEndTag, tb::kSessionStartTag, tb::kExperimentTag, kConfigTag});
    for (const auto& r : kept) {
      std::vector<tb::Scalar> lacking;
      for (auto& s : record_scalars(kind_, r.event, r.values))
        if (!have.count({s.tag, r.step})) lacking.push_back(std::move(s));
      if (!lacking.empty()) missing.emplace_back(r.step, std::move(lacking));
    }
  } else {
    for (const auto& file : io::TensorBoardWriter::event_files(dir)) {  // an earlier start of this run
      spdlog::info("[tensorboard] removing {} of an earlier start of this run", file);
      std::filesystem::remove(file);
    }
  }
  writer_ = std::make_unique<io::TensorBoardWriter>(dir);
  const double now = io::wall_time_now();
  const auto hparams = run_hparams(run);
  writer_->write_event(tb::text_event(now, 0, kConfigTag, config_markdown(run.config)));
  writer_->write_event(tb::hparams_experiment_event(now, hparams, hparams_metric_tags()));
  writer_->write_event(tb::session_start_event(now, hparams, ""));
  for (const auto& [step, scalars] : missing) {
    spdlog::info("[tensorboard] step {}: {} values that metrics.jsonl has and the events lost are written again", step,
                 scalars.size());
    writer_->write_scalars(step, scalars);
  }
}

TensorBoardRun::~TensorBoardRun() = default;

void TensorBoardRun::record(const std::string& event, int64_t step, const nlohmann::json& values) {
  writer_->write_scalars(step, record_scalars(kind_, event, values));
}

void TensorBoardRun::end_session(int64_t step) {
  writer_->write_event(tb::session_end_event(io::wall_time_now(), step, tb::SessionStatus::kSuccess));
}

}  // namespace tisa::train
