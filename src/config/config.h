// Typed configuration of tisa-train (STYLE §4): one struct per YAML section, each field with its
// documented default. YAML is turned into these structs in one place (config_loader.cpp); no
// other code reads YAML nodes.
//
// Each struct lists its fields once, in visit(), as
//     v.field("yaml_key", member, "help text");          // scalars: bool, int64_t, double, string
//     v.choice("yaml_key", member, kNames, "help text");  // enums, from/to a fixed name table
//     v.section("yaml_key", member, "help text");         // nested struct
//     v.choice("yaml_key", name, names, "help text");     // a string from a run-time name list
// so that loading, unknown-key detection, `--set` overrides, dumping the resolved config and the
// documentation of defaults are all derived from the same list.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/position_settings.h"

namespace tisa::config {

template <typename Enum, size_t N>
using NameTable = std::array<std::pair<const char*, Enum>, N>;

// Name of an enum value in its table ("?" if absent), and the value of a name (nullopt if absent).
template <class Enum, size_t N> const char* name_of(Enum value, const NameTable<Enum, N>& names) {
  for (const auto& [name, v] : names)
    if (v == value) return name;
  return "?";
}
template <class Enum, size_t N> std::optional<Enum> value_of(const std::string& name, const NameTable<Enum, N>& names) {
  for (const auto& [n, v] : names)
    if (name == n) return v;
  return std::nullopt;
}

// ---------------------------------------------------------------------------- model.position
// position.sharing (PositionSharing, position_settings.h) by name.
inline constexpr NameTable<PositionSharing, 3> kPositionSharingNames{
    {{"per_layer", PositionSharing::kPerLayer}, {"per_module", PositionSharing::kPerModule},
     {"model", PositionSharing::kModel}}};

// The position terms of a model. `relative` names one scheme of src/model/position/ (its file
// pair, built through the table in position/registry.cpp); the valid names and the settings
// sections (model.position.<scheme>: ...) come from that table (position_settings.h), so that a
// scheme owns its settings and adding one never edits this file.
class PositionConfig {
 public:
  bool absolute = true;                   // learned table added to the embeddings
  std::string relative = "none";          // the scheme besides the learned table
  PositionSharing sharing = PositionSharing::kPerLayer;

  // Default settings of every installed scheme that has settings, in table order.
  PositionConfig();
  PositionConfig(const PositionConfig& other);
  PositionConfig& operator=(const PositionConfig& other);
  PositionConfig(PositionConfig&&) = default;
  PositionConfig& operator=(PositionConfig&&) = default;
  ~PositionConfig() = default;

  // Settings of scheme T (T::kName); the non-const form adds defaults when T is not held.
  template <class T> T& settings();
  template <class T> const T& settings() const;
  // Settings of scheme `name`; null when it has none (or is unknown).
  SchemeSettings* find_settings(const std::string& name);
  const SchemeSettings* find_settings(const std::string& name) const;
  // Every held settings object, in table order.
  std::vector<const SchemeSettings*> all_settings() const;
  // The sharing in effect: position.sharing, or what the selected scheme's legacy switches say
  // when set (shaw.per_layer / per_attention_module, tisa.per_layer).
  PositionSharing effective_sharing() const;

  template <class V> void visit(V& v) {
    v.field("absolute", absolute, "learned absolute position embeddings");
    v.choice("relative", relative, position_scheme_names(),
             "position scheme besides the learned table (src/model/position/; none = no other term)");
    v.choice("sharing", sharing, kPositionSharingNames,
             "position parameters per_layer (application), per_module (group x inner layer) or one for the model");
    for (auto& s : sections_) v.section(s.settings->name(), *s.settings, s.help.c_str());
  }

 private:
  struct Section {
    std::string help;  // "settings of the <name> scheme"
    std::unique_ptr<SchemeSettings> settings;
  };
  SchemeSettings& add_settings(std::unique_ptr<SchemeSettings> settings);
  [[noreturn]] static void settings_type_mismatch(const char* name);
  std::vector<Section> sections_;
};

template <class T> T& PositionConfig::settings() {
  SchemeSettings* s = find_settings(T::kName);
  if (!s) s = &add_settings(std::make_unique<SettingsOf<T>>());
  auto* typed = dynamic_cast<SettingsOf<T>*>(s);
  if (!typed) settings_type_mismatch(T::kName);
  return typed->value;
}

template <class T> const T& PositionConfig::settings() const {
  if (const auto* typed = dynamic_cast<const SettingsOf<T>*>(find_settings(T::kName))) return typed->value;
  static const T defaults{};
  return defaults;
}

// ---------------------------------------------------------------------------- model.hidden_act
// Activations, by their Hugging Face names (config.json's hidden_act); gelu_new and
// gelu_pytorch_tanh are the same tanh approximation.
enum class HiddenAct { kGeluNew, kGelu, kRelu, kGeluPytorchTanh };
inline constexpr NameTable<HiddenAct, 4> kHiddenActNames{{{"gelu_new", HiddenAct::kGeluNew},
                                                           {"gelu", HiddenAct::kGelu},
                                                           {"relu", HiddenAct::kRelu},
                                                           {"gelu_pytorch_tanh", HiddenAct::kGeluPytorchTanh}}};

// ---------------------------------------------------------------------------- model
// ALBERT sizes (SPEC §3); defaults are albert-base-v2.
struct ModelConfig {
  int64_t vocab_size = 30000;
  int64_t embedding_size = 128;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_hidden_groups = 1;
  int64_t inner_group_num = 1;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  HiddenAct hidden_act = HiddenAct::kGeluNew;
  double hidden_dropout_prob = 0.0;
  double attention_probs_dropout_prob = 0.0;
  double classifier_dropout_prob = 0.1;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double layer_norm_eps = 1e-12;
  double initializer_range = 0.02;
  int64_t pad_token_id = 0;
  PositionConfig position;
  template <class V> void visit(V& v) {
    v.field("vocab_size", vocab_size, "vocabulary size V (must match the tokenizer)");
    v.field("embedding_size", embedding_size, "factorised embedding size E");
    v.field("hidden_size", hidden_size, "hidden size H");
    v.field("num_hidden_layers", num_hidden_layers, "number of layer applications L");
    v.field("num_hidden_groups", num_hidden_groups, "number of distinct (shared) layer groups");
    v.field("inner_group_num", inner_group_num, "layers inside each group");
    v.field("num_attention_heads", num_attention_heads, "attention heads A");
    v.field("intermediate_size", intermediate_size, "feed-forward size I");
    v.choice("hidden_act", hidden_act, kHiddenActNames, "activation (Hugging Face names)");
    v.field("hidden_dropout_prob", hidden_dropout_prob, "dropout on hidden states");
    v.field("attention_probs_dropout_prob", attention_probs_dropout_prob, "dropout on attention probabilities");
    v.field("classifier_dropout_prob", classifier_dropout_prob, "dropout before classification heads");
    v.field("max_position_embeddings", max_position_embeddings, "rows P of the absolute table; longest input");
    v.field("type_vocab_size", type_vocab_size, "token types");
    v.field("layer_norm_eps", layer_norm_eps, "LayerNorm epsilon");
    v.field("initializer_range", initializer_range, "std of the normal initialisation");
    v.field("pad_token_id", pad_token_id, "id of the padding token");
    v.section("position", position, "position schemes (SPEC §2)");
  }
};

// ---------------------------------------------------------------------------- data
enum class MaskingMode { kDynamic, kStatic };
inline constexpr NameTable<MaskingMode, 2> kMaskingModeNames{
    {{"dynamic", MaskingMode::kDynamic}, {"static", MaskingMode::kStatic}}};

// Pretraining examples (SPEC §5).
struct DataConfig {
  std::string dataset;                 // folder written by `tisa-train prepare pretrain`
  std::string dataset_identity;        // that folder's content identity (set by pretrain; recorded in config.yaml)
  int64_t max_seq_length = 512;
  int64_t max_predictions_per_seq = 20;
  double masked_lm_prob = 0.15;
  double short_seq_prob = 0.1;
  int64_t max_ngram = 3;               // n-grams up to this length, p(n) ∝ 1/n
  MaskingMode masking = MaskingMode::kDynamic;
  int64_t dupe_factor = 10;            // static masking: pre-drawn copies per epoch cycle
  int64_t valid_seed = 12345;          // the validation examples' seed, fixed across training seeds
  int64_t workers = 1;                 // background threads building examples
  int64_t prefetch_batches = 8;        // queue depth between builders and the trainer
  template <class V> void visit(V& v) {
    v.field("dataset", dataset, "dataset folder from `tisa-train prepare pretrain` (relative to the config file)");
    v.field("dataset_identity", dataset_identity,
            "content identity of that folder (set by pretrain from its header.json; a --resume must use the same data)");
    v.field("max_seq_length", max_seq_length, "tokens per example incl. [CLS]/[SEP]");
    v.field("max_predictions_per_seq", max_predictions_per_seq, "most masked positions per example");
    v.field("masked_lm_prob", masked_lm_prob, "share of tokens to predict");
    v.field("short_seq_prob", short_seq_prob, "probability of a shorter random target length");
    v.field("max_ngram", max_ngram, "longest masked n-gram (whole words)");
    v.choice("masking", masking, kMaskingModeNames, "dynamic (re-drawn each epoch) or static");
    v.field("dupe_factor", dupe_factor, "static masking: number of pre-drawn maskings");
    v.field("valid_seed", valid_seed,
            "seed of the validation examples (segmentation, pairs, masking); kept apart from training.seed so that "
            "runs with different seeds are evaluated on the same examples");
    v.field("workers", workers, "background example-building threads");
    v.field("prefetch_batches", prefetch_batches, "batches queued ahead of the trainer");
  }
};

// ---------------------------------------------------------------------------- optimizer
enum class OptimizerType { kLamb, kAdamW };
inline constexpr NameTable<OptimizerType, 2> kOptimizerTypeNames{
    {{"lamb", OptimizerType::kLamb}, {"adamw", OptimizerType::kAdamW}}};

// SPEC §7.
struct OptimizerConfig {
  OptimizerType type = OptimizerType::kLamb;
  double lr = 0.00176;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-6;
  double weight_decay = 0.01;
  bool bias_correction = false;   // LAMB: false reproduces ALBERT; NVIDIA's LAMB uses true
  bool trust_ratio_all = false;   // LAMB: apply the trust ratio to excluded tensors too (NVLAMB)
  double clip_norm = 1.0;         // global gradient-norm clip; 0 disables
  bool fused = true;              // CPU float32: fused update kernel (false: per-op reference path)
  template <class V> void visit(V& v) {
    v.choice("type", type, kOptimizerTypeNames, "lamb or adamw");
    v.field("lr", lr, "peak learning rate");
    v.field("beta1", beta1, "first-moment decay");
    v.field("beta2", beta2, "second-moment decay");
    v.field("eps", eps, "epsilon added to sqrt(v)");
    v.field("weight_decay", weight_decay, "decoupled weight decay (not on LayerNorm/bias)");
    v.field("bias_correction", bias_correction, "LAMB: Adam bias correction");
    v.field("trust_ratio_all", trust_ratio_all, "LAMB: trust ratio on excluded tensors too");
    v.field("clip_norm", clip_norm, "global gradient-norm clip (0 = off)");
    v.field("fused", fused, "CPU float32: one fused pass per tensor (false: the per-op reference path)");
  }
};

// ---------------------------------------------------------------------------- schedule
enum class ScheduleType { kLinearHF, kAlbertPoly, kConstant };
inline constexpr NameTable<ScheduleType, 3> kScheduleTypeNames{{{"linear", ScheduleType::kLinearHF},
                                                                  {"albert_poly", ScheduleType::kAlbertPoly},
                                                                  {"constant", ScheduleType::kConstant}}};

struct ScheduleConfig {
  ScheduleType type = ScheduleType::kLinearHF;
  int64_t warmup_steps = 0;   // linear warmup from 0
  double warmup_fraction = 0.0;  // alternative to warmup_steps (fraction of total steps), 0 = unused
  int64_t total_steps = 0;  // the schedule's horizon T; 0 = training.steps (a larger T stops part-way)
  template <class V> void visit(V& v) {
    v.choice("type", type, kScheduleTypeNames,
             "linear (HF: decay counts from the end of warmup), albert_poly (decay from step 0) or constant");
    v.field("warmup_steps", warmup_steps, "linear warmup steps");
    v.field("warmup_fraction", warmup_fraction, "warmup as a fraction of total steps (overrides warmup_steps when > 0)");
    v.field("total_steps", total_steps,
            "updates the schedule spans (0 = training.steps); larger ends the run part-way through it");
  }
};

// ---------------------------------------------------------------------------- training
enum class Device { kCpu, kCuda };
inline constexpr NameTable<Device, 2> kDeviceNames{{{"cpu", Device::kCpu}, {"cuda", Device::kCuda}}};
// kAuto: bf16 where the device computes it faster than fp32, else fp32 (train/precision_choice.h); a run
// resolves it once at start and records the result in its config.yaml.
enum class Precision { kFp32, kBf16, kAuto };
inline constexpr NameTable<Precision, 3> kPrecisionNames{
    {{"fp32", Precision::kFp32}, {"bf16", Precision::kBf16}, {"auto", Precision::kAuto}}};

struct TrainingConfig {
  int64_t steps = 1000;               // optimiser updates
  int64_t batch_size = 32;            // examples per micro-batch (per process)
  int64_t accumulation = 1;           // micro-batches per update
  int64_t global_batch = 0;           // > 0: examples per update over all processes; sets accumulation
  int64_t eval_interval = 500;        // steps between evaluations (0 = only at the end)
  int64_t eval_batches = 20;          // validation batches per evaluation (0 = all)
  int64_t checkpoint_interval = 500;  // steps between checkpoints (0 = only at the end)
  int64_t keep_checkpoints = 2;       // last K kept, plus the best
  int64_t log_interval = 10;          // steps between log lines / metrics records
  bool tensorboard = true;            // also write the metrics as TensorBoard events (<run>/tensorboard/)
  int64_t seed = 12345;
  int64_t threads = 0;                // intra-op threads (0 = LibTorch's default)
  Device device = Device::kCpu;
  Precision precision = Precision::kFp32;
  int64_t max_bad_steps = 10;         // consecutive NaN/Inf losses before stopping
  bool deterministic = true;          // deterministic algorithms (bitwise resume on CPU)
  int64_t position_span = 0;          // > 0: pretraining shifts each sequence's learned positions within 0 … span−1
  template <class V> void visit(V& v) {
    v.field("steps", steps, "optimiser updates");
    v.field("batch_size", batch_size, "examples per micro-batch per process");
    v.field("accumulation", accumulation, "micro-batches per update");
    v.field("global_batch", global_batch,
            "examples per update over all processes (0 = batch_size x accumulation x processes); "
            "when > 0, accumulation = global_batch / (batch_size x processes)");
    v.field("eval_interval", eval_interval, "steps between evaluations (0 = only at the end)");
    v.field("eval_batches", eval_batches, "validation batches per evaluation (0 = all)");
    v.field("checkpoint_interval", checkpoint_interval, "steps between checkpoints (0 = only at the end)");
    v.field("keep_checkpoints", keep_checkpoints, "recent checkpoints kept (plus the best)");
    v.field("log_interval", log_interval, "steps between log lines and metrics records");
    v.field("tensorboard", tensorboard,
            "write TensorBoard event files beside metrics.jsonl (<run>/tensorboard/; GLUE: <task>/seed-N/tensorboard/)");
    v.field("seed", seed, "random seed");
    v.field("threads", threads, "intra-op threads (0 = LibTorch default)");
    v.choice("device", device, kDeviceNames, "cpu or cuda");
    v.choice("precision", precision, kPrecisionNames,
             "fp32, bf16 (autocast) or auto (bf16 where it outruns fp32: CUDA, or a CPU with AMX or an AMD "
             "CPU with avx512_bf16; else fp32)");
    v.field("max_bad_steps", max_bad_steps, "consecutive NaN/Inf losses tolerated before stopping");
    v.field("deterministic", deterministic, "use deterministic algorithms");
    v.field("position_span", position_span,
            "pretraining only (0 = off): each sequence reads the learned position table (position.absolute) at "
            "rows o … o+L−1, o drawn uniformly from 0 … position_span−L per sequence and update, so a short first "
            "phase trains every row a longer later phase uses; evaluation always reads rows 0 … L−1");
  }
};

// ---------------------------------------------------------------------------- glue
struct GlueConfig {
  std::string task;            // CoLA, SST-2, ... (usually from --task)
  double lr = 1e-5;
  int64_t batch_size = 32;
  int64_t steps = 0;           // 0 = derive from epochs
  double epochs = 3.0;
  int64_t warmup_steps = 0;
  double warmup_fraction = 0.1;
  int64_t max_length = 128;
  double weight_decay = 0.01;
  double classifier_dropout = 0.1;
  int64_t eval_interval = 0;   // 0 = once per epoch
  int64_t eval_batch_size = 64;
  bool group_by_length = false;  // batches of similar length (windows of 50 batches sorted by length)
  std::string init;              // the --init model folder (set by `glue`; recorded in config.yaml)
  std::string init_identity;     // content hash of that folder's files, checked on --resume (glue/glue_resume.h)
  template <class V> void visit(V& v) {
    v.field("task", task, "GLUE task name");
    v.field("lr", lr, "peak learning rate (AdamW)");
    v.field("batch_size", batch_size, "training batch size");
    v.field("steps", steps, "training steps (0 = from epochs)");
    v.field("epochs", epochs, "epochs when steps = 0");
    v.field("warmup_steps", warmup_steps, "linear warmup steps (0 = warmup_fraction)");
    v.field("warmup_fraction", warmup_fraction, "warmup as a fraction of steps when warmup_steps = 0");
    v.field("max_length", max_length, "maximum tokens per example");
    v.field("weight_decay", weight_decay, "AdamW decay (not on LayerNorm/bias)");
    v.field("classifier_dropout", classifier_dropout, "dropout before the classifier");
    v.field("eval_interval", eval_interval, "steps between dev evaluations (0 = once per epoch)");
    v.field("eval_batch_size", eval_batch_size, "evaluation batch size");
    v.field("group_by_length", group_by_length,
            "training batches of similar length: windows of 50 batches sorted by length (less padding)");
    v.field("init", init, "the --init model folder (set from --init)");
    v.field("init_identity", init_identity,
            "content hash of the --init folder's files (set by glue; a --resume must start from the same model)");
  }
};

// ---------------------------------------------------------------------------- whole file
struct Config {
  ModelConfig model;
  DataConfig data;
  OptimizerConfig optimizer;
  ScheduleConfig schedule;
  TrainingConfig training;
  GlueConfig glue;
  template <class V> void visit(V& v) {
    v.section("model", model, "model sizes and position schemes");
    v.section("data", data, "pretraining data and example building");
    v.section("optimizer", optimizer, "optimiser");
    v.section("schedule", schedule, "learning-rate schedule");
    v.section("training", training, "training loop");
    v.section("glue", glue, "GLUE fine-tuning");
  }
};

}  // namespace tisa::config
