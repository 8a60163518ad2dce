// validate(): every range and cross-field rule of a Config in one function (STYLE §4, like
// SentencePiece's VerifySpec), reporting all problems; the settings of each position scheme are
// checked by the scheme itself (its validate(), called from here).
#include <cmath>
#include <optional>

#include "common/error.h"
#include "config/config_loader.h"
#include "config/value_format.h"
#include "config/yaml_tree.h"
#include "data/glue_tsv.h"

namespace tisa::config {

// ---------------------------------------------------------------------------- validate
// More threads than any machine this trainer targets has cores: a typo (data.workers=100000 used to
// abort the process creating them). Counts above the cores of this machine are warned about at
// start-up (train/runtime_info.h), not refused, so that a config travels between machines.
constexpr int64_t kMaxThreads = 1024;

std::vector<ConfigProblem> validate(const Config& c) {
  std::vector<ConfigProblem> problems;
  auto add = [&](const std::string& key, const std::string& message) { problems.push_back({key, message}); };
  auto at_least = [&](const std::string& key, int64_t value, int64_t minimum) {
    if (value < minimum) add(key, "must be >= " + std::to_string(minimum) + ", got " + std::to_string(value));
  };
  auto at_most = [&](const std::string& key, int64_t value, int64_t maximum, const std::string& why) {
    if (value > maximum) add(key, "must be <= " + std::to_string(maximum) + " (" + why + "), got " + std::to_string(value));
  };
  auto positive = [&](const std::string& key, double value) {
    if (!(value > 0) || std::isinf(value)) add(key, "must be a positive finite number, got " + format_double(value));
  };
  auto non_negative = [&](const std::string& key, double value) {
    if (!(value >= 0) || std::isinf(value)) add(key, "must be a finite number >= 0, got " + format_double(value));
  };
  auto probability = [&](const std::string& key, double value) {  // [0, 1)
    if (!(value >= 0 && value < 1)) add(key, "must be in [0, 1), got " + format_double(value));
  };

  // model (SPEC §2, §3)
  const ModelConfig& m = c.model;
  at_least("model.vocab_size", m.vocab_size, 1);
  at_least("model.embedding_size", m.embedding_size, 1);
  at_least("model.hidden_size", m.hidden_size, 1);
  at_least("model.num_hidden_layers", m.num_hidden_layers, 1);
  at_least("model.num_hidden_groups", m.num_hidden_groups, 1);
  at_least("model.inner_group_num", m.inner_group_num, 1);
  at_least("model.num_attention_heads", m.num_attention_heads, 1);
  at_least("model.intermediate_size", m.intermediate_size, 1);
  at_least("model.max_position_embeddings", m.max_position_embeddings, 1);
  at_least("model.type_vocab_size", m.type_vocab_size, 1);
  if (m.hidden_size >= 1 && m.num_attention_heads >= 1 && m.hidden_size % m.num_attention_heads != 0)
    add("model.hidden_size", "must be divisible by model.num_attention_heads (" + std::to_string(m.num_attention_heads) +
                                 "), got " + std::to_string(m.hidden_size));
  if (m.num_hidden_layers >= 1 && m.num_hidden_groups >= 1) {
    if (m.num_hidden_groups > m.num_hidden_layers)
      add("model.num_hidden_groups", "must be <= model.num_hidden_layers (" + std::to_string(m.num_hidden_layers) +
                                         "), got " + std::to_string(m.num_hidden_groups));
    else if (m.num_hidden_layers % m.num_hidden_groups != 0)
      add("model.num_hidden_layers", "must be divisible by model.num_hidden_groups (" +
                                         std::to_string(m.num_hidden_groups) + "), got " +
                                         std::to_string(m.num_hidden_layers));
  }
  probability("model.hidden_dropout_prob", m.hidden_dropout_prob);
  probability("model.attention_probs_dropout_prob", m.attention_probs_dropout_prob);
  probability("model.classifier_dropout_prob", m.classifier_dropout_prob);
  positive("model.layer_norm_eps", m.layer_norm_eps);
  positive("model.initializer_range", m.initializer_range);
  if (m.pad_token_id < 0 || (m.vocab_size >= 1 && m.pad_token_id >= m.vocab_size))
    add("model.pad_token_id", "must be in [0, model.vocab_size), got " + std::to_string(m.pad_token_id));
  // model.position: each scheme checks its own settings (position_settings.h); the legacy
  // per-scheme sharing switches must agree with position.sharing.
  const PositionConfig& pos = m.position;
  for (const SchemeSettings* settings : pos.all_settings()) {
    SettingsProblems scheme_problems(settings->name(), problems);
    settings->validate(m, pos.relative == settings->name(), scheme_problems);
  }
  if (const SchemeSettings* selected = pos.find_settings(pos.relative)) {
    const std::optional<PositionSharing> legacy = selected->legacy_sharing();
    if (legacy && pos.sharing != *legacy && pos.sharing != PositionSharing::kPerLayer)
      add("model.position.sharing", "contradicts the legacy per_layer / per_attention_module switch of the scheme; "
                                    "set only model.position.sharing");
  }

  // data (SPEC §5)
  const DataConfig& d = c.data;
  at_least("data.max_seq_length", d.max_seq_length, 4);  // [CLS] a [SEP] b [SEP] needs room
  if (m.max_position_embeddings >= 1 && d.max_seq_length > m.max_position_embeddings)
    add("data.max_seq_length", "must be <= model.max_position_embeddings (" +
                                   std::to_string(m.max_position_embeddings) + "), got " +
                                   std::to_string(d.max_seq_length));
  at_least("data.max_predictions_per_seq", d.max_predictions_per_seq, 1);
  if (!(d.masked_lm_prob > 0 && d.masked_lm_prob < 1))
    add("data.masked_lm_prob", "must be in (0, 1), got " + format_double(d.masked_lm_prob));
  if (!(d.short_seq_prob >= 0 && d.short_seq_prob <= 1))
    add("data.short_seq_prob", "must be in [0, 1], got " + format_double(d.short_seq_prob));
  at_least("data.max_ngram", d.max_ngram, 1);
  at_least("data.dupe_factor", d.dupe_factor, 1);
  at_least("data.valid_seed", d.valid_seed, 0);
  at_least("data.workers", d.workers, 1);
  at_most("data.workers", d.workers, kMaxThreads, "threads that build batches");
  at_least("data.prefetch_batches", d.prefetch_batches, 1);
  at_most("data.prefetch_batches", d.prefetch_batches, 4096, "batches held in memory");

  // optimizer, schedule (SPEC §7)
  const OptimizerConfig& o = c.optimizer;
  positive("optimizer.lr", o.lr);
  probability("optimizer.beta1", o.beta1);
  probability("optimizer.beta2", o.beta2);
  positive("optimizer.eps", o.eps);
  non_negative("optimizer.weight_decay", o.weight_decay);
  non_negative("optimizer.clip_norm", o.clip_norm);
  const ScheduleConfig& s = c.schedule;
  at_least("schedule.warmup_steps", s.warmup_steps, 0);
  probability("schedule.warmup_fraction", s.warmup_fraction);
  at_least("schedule.total_steps", s.total_steps, 0);
  if (s.total_steps > 0 && s.total_steps < c.training.steps)
    add("schedule.total_steps", "must be 0 (= training.steps) or >= training.steps (" +
                                    std::to_string(c.training.steps) + "), got " + std::to_string(s.total_steps));
  const int64_t horizon = s.total_steps > 0 ? s.total_steps : c.training.steps;
  if (s.warmup_steps > horizon && horizon >= 1)
    add("schedule.warmup_steps", "must be <= the schedule's " + std::to_string(horizon) +
                                     " updates (schedule.total_steps, else training.steps), got " +
                                     std::to_string(s.warmup_steps));

  // training
  const TrainingConfig& t = c.training;
  at_least("training.steps", t.steps, 1);
  at_least("training.batch_size", t.batch_size, 1);
  at_least("training.accumulation", t.accumulation, 1);
  at_least("training.eval_interval", t.eval_interval, 0);
  at_least("training.eval_batches", t.eval_batches, 0);
  at_least("training.checkpoint_interval", t.checkpoint_interval, 0);
  at_least("training.keep_checkpoints", t.keep_checkpoints, 1);
  at_least("training.log_interval", t.log_interval, 1);
  at_least("training.seed", t.seed, 0);
  at_least("training.threads", t.threads, 0);
  at_most("training.threads", t.threads, kMaxThreads, "intra-op threads; 0 = one per core");
  at_least("training.max_bad_steps", t.max_bad_steps, 1);
  if (t.position_span != 0 &&
      (t.position_span < c.data.max_seq_length || t.position_span > c.model.max_position_embeddings))
    add("training.position_span", "must be 0 (off) or between data.max_seq_length (" +
                                      std::to_string(c.data.max_seq_length) + ") and model.max_position_embeddings (" +
                                      std::to_string(c.model.max_position_embeddings) + "), got " +
                                      std::to_string(t.position_span));

  // glue (SPEC §8)
  const GlueConfig& g = c.glue;
  if (!g.task.empty() && !data::find_glue_task_or_null(g.task)) {
    std::string known;
    for (const auto& t : data::glue_tasks()) known += (known.empty() ? "" : ", ") + t.name;
    add("glue.task", "unknown GLUE task '" + g.task + "' (expected one of: " + known + ")");
  }
  positive("glue.lr", g.lr);
  at_least("glue.batch_size", g.batch_size, 1);
  at_least("glue.steps", g.steps, 0);
  if (g.steps == 0) positive("glue.epochs", g.epochs);
  at_least("glue.warmup_steps", g.warmup_steps, 0);
  probability("glue.warmup_fraction", g.warmup_fraction);
  at_least("glue.max_length", g.max_length, 3);
  if (m.max_position_embeddings >= 1 && g.max_length > m.max_position_embeddings)
    add("glue.max_length", "must be <= model.max_position_embeddings (" + std::to_string(m.max_position_embeddings) +
                               "), got " + std::to_string(g.max_length));
  non_negative("glue.weight_decay", g.weight_decay);
  probability("glue.classifier_dropout", g.classifier_dropout);
  at_least("glue.eval_interval", g.eval_interval, 0);
  at_least("glue.eval_batch_size", g.eval_batch_size, 1);
  return problems;
}

void validate_or_throw(const Config& config, const std::string& source) {
  std::vector<ConfigProblem> problems = validate(config);
  if (problems.empty()) return;
  std::vector<std::string> lines;
  for (const auto& p : problems) lines.push_back(source + ": " + p.key + ": " + p.message);
  throw Error(join(lines, "\n"));
}

}  // namespace tisa::config
