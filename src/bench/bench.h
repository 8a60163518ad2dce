// Benchmarks behind `tisa-train bench` (issue 9): the pretraining step (forward + backward +
// optimiser) and forward-only throughput of ALBERT for one configuration, the machine's matrix
// product rate with the same LibTorch, and the torch-free data pipeline (example builder +
// batch loader of src/data).
//
// Every measurement runs `warmup` untimed repetitions, then `reps` timed ones, and reports the
// median and the spread (min, max) of the per-repetition times. Peak memory is the process's
// VmHWM (/proc/self/status): meaningful for one configuration per process, which is why the bench
// command runs each model configuration in a fresh child process (see bench_command.cpp).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"

namespace tisa::bench {

// Median / min / max of repetition times (seconds).
struct Spread {
  std::vector<double> samples;
  double median = 0, min = 0, max = 0;
  static Spread of(std::vector<double> samples);
  nlohmann::json to_json() const;
};

// Memory of this process in MiB from /proc/self/status (VmRSS, VmHWM); 0 where unavailable.
double current_rss_mib();
double peak_rss_mib();

// ---------------------------------------------------------------------------------- GEMM
struct GemmSpec {
  int64_t m = 1024, n = 1024, k = 1024;
  std::string dtype = "f32";  // f32 (LibTorch's BLAS), f32-onednn (model/cpu_linear.h, where built) or bf16
  int warmup = 2;
  int reps = 7;
};
struct GemmResult {
  GemmSpec spec;
  int threads = 0;
  Spread seconds;
  double gflops_median = 0;  // 2·m·n·k / median
  nlohmann::json to_json() const;
};
GemmResult run_gemm(const GemmSpec& spec);
// The shapes the encoder multiplies for `tokens` = batch·length rows at hidden size H and
// feed-forward size I: [T,H]x[H,H], [T,H]x[H,I], [T,I]x[I,H], and 1024³.
std::vector<GemmSpec> default_gemm_specs(int64_t tokens, int64_t hidden, int64_t intermediate);

// ---------------------------------------------------------------------------------- model
// A label names a model's position terms: [<computation>-]<position>[-<preset>], where
//   position     absolute | <scheme> | absolute+<scheme> | absolute_<scheme>, <scheme> any name of
//                the registry (model/position/registry.h): tisa, shaw, rope, alibi, none, ...;
//   computation  another way the scheme computes its terms (its computations(); shaw: gather,
//                skew, naive = through an [L, L, d] table), e.g. naive-shaw;
//   preset       named settings of the scheme (its settings' apply_preset(); shaw: hf = k = P − 1,
//                no value term, HF's relative_key), e.g. shaw-hf, gather-shaw-hf.
// Sets model.position of `m`; returns the computation ("" = the scheme's own). An unknown part
// throws tisa::Error naming what is known.
std::string apply_scheme_label(const std::string& label, config::ModelConfig& m);

struct ModelBenchSpec {
  std::string label;             // e.g. "absolute", "absolute_tisa", "rope", "naive-shaw" (apply_scheme_label)
  config::ModelConfig model;
  std::string mode = "train";    // "train" (fwd + bwd + optimiser) or "forward" (no grad)
  config::Precision precision = config::Precision::kFp32;
  config::OptimizerType optimizer = config::OptimizerType::kAdamW;
  bool fused_optimizer = true;   // optimizer.fused: the fused CPU update (false: per-op reference)
  int64_t batch = 8;
  int64_t seq = 128;
  int64_t masked_per_seq = -1;   // -1: min(20, round(0.15·seq)) as ALBERT's data
  bool mlm_all_positions = false;  // HF-style: vocabulary projection at every position
  bool full_final_layer = false;  // the final layer at every position (false: only where the heads read, as the trainer)
  std::string computation;       // another way the scheme computes its terms (naive, gather); "" = its own
  std::string device = "cpu";    // "cpu" or "cuda"
  bool eager_attention = false;  // force the eager softmax attention (default: fused where possible)
  bool kernel_attention = false;  // force tisa-train's CPU attention kernel where the layer allows it
  std::string products = "auto";  // the float32 linear layers' library: auto, blas or onednn (model/cpu_linear.h)
  int warmup = 2;
  int reps = 5;
  std::string profile_path;      // non-empty: profile 2 extra steps, write the table here (+ .trace.json)
  uint64_t seed = 1;
};
struct ModelBenchResult {
  ModelBenchSpec spec;
  int threads = 0;
  Spread seconds;                 // per step
  double tokens_per_s = 0;        // batch·seq / median
  double tokens_per_s_min = 0, tokens_per_s_max = 0;
  double rss_start_mib = 0;       // after LibTorch is loaded, before the model exists
  double rss_model_mib = 0;       // after the model (and optimiser state) exist
  double peak_rss_mib = 0;        // VmHWM at the end
  double loss_first = 0, loss_last = 0;  // train: loss of the first and last timed step
  double blas_gflops = 0;         // from the profile, when one was taken
  int64_t parameters = 0;
  double model_flops_per_step = 0;  // model_flops(): what the step must compute, not what ran
  double achieved_tflops = 0;       // model_flops_per_step / median step time
  bool fused_attention = false;     // whether the attention layers took the SDPA path
  std::string attention;            // the path they took: "kernel" (CPU kernel), "sdpa" or "eager"
  nlohmann::json to_json() const;
};
// Model FLOPs of one step of `spec` (the numerator of model-FLOPs utilisation): matrix products of
// the encoder (Q, K, V, output, feed-forward, and the two attention products over L keys) for
// every layer application, the embedding projection E→H, the MLM head at the masked positions
// (all positions with mlm_all_positions) and the pooler/SOP head; ×3 for a training step
// (forward + backward). Position terms, norms and softmax are not counted, as in the usual
// 6·N·T accounting.
double model_flops(const ModelBenchSpec& spec);

// Builds the model of `spec` in this process and times it. Throws tisa::Error on bad specs.
ModelBenchResult run_model_bench(const ModelBenchSpec& spec);
ModelBenchSpec model_spec_from_json(const nlohmann::json& j, const config::ModelConfig& model);
nlohmann::json model_spec_to_json(const ModelBenchSpec& spec);

// Short loss-curve check of bf16 autocast against fp32: `steps` training steps on a fixed batch
// stream from the same initialisation, in both precisions; returns both curves.
struct LossCurve {
  std::vector<double> fp32, bf16;
  nlohmann::json to_json() const;
};
LossCurve compare_precisions(const config::ModelConfig& model, int64_t batch, int64_t seq, int64_t steps,
                             double lr, uint64_t seed);

// ---------------------------------------------------------------------------------- data
struct DataBenchSpec {
  std::string dataset;          // prepared dataset folder; empty = synthetic (written to a temp dir)
  int64_t batch = 8;
  int64_t seq = 128;
  int64_t workers = 1;
  int64_t batches = 200;        // timed batches per repetition
  int reps = 3;
  uint64_t seed = 12345;
};
struct DataBenchResult {
  DataBenchSpec spec;
  std::string source;           // dataset path or "synthetic"
  Spread seconds;               // per repetition of `batches` batches
  double examples_per_s = 0, tokens_per_s = 0;  // median
  nlohmann::json to_json() const;
};
DataBenchResult run_data_bench(const DataBenchSpec& spec);

}  // namespace tisa::bench
