// Model benchmarks: pretraining step and forward throughput, peak memory (with a scheme's other
// computations, e.g. Shaw's naive [L, L, d] one, for the memory comparison), and the bf16-vs-fp32
// loss-curve check; see bench.h.
#include <c10/core/InferenceMode.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <numeric>
#include <random>
#include <cstring>
#include <sstream>

#include "bench/bench.h"
#include "bench/op_profile.h"
#include "common/error.h"
#include "common/fs.h"
#include "config/config_loader.h"
#include "model/albert.h"
#include "model/position/registry.h"
#include "optim/optimizer.h"
#include "model/autocast.h"
#include "model/cpu_linear.h"
#include "model/fused_attention.h"
#include "optim/schedule.h"
#include "train/pretrain_step.h"
#include "train/precision_choice.h"

namespace tisa::bench {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double read_status_kib(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(key);
  while (std::getline(in, line))
    if (line.compare(0, n, key) == 0) return std::atof(line.c_str() + n + 1);
  return 0;
}

// A random batch of full-length sequences (no padding): ids uniform over the non-special
// vocabulary, token types 0 then 1, `masked_per_seq` distinct masked positions per row (never
// [CLS] or the last token), SOP labels 0/1.
data::PretrainBatch make_batch(int64_t B, int64_t L, int64_t masked_per_seq, int64_t vocab, std::mt19937_64& rng) {
  data::PretrainBatch b;
  b.batch_size = B;
  b.seq_len = L;
  std::uniform_int_distribution<int64_t> id(5, vocab - 1), bit(0, 1);
  for (int64_t i = 0; i < B; ++i) {
    for (int64_t t = 0; t < L; ++t) {
      b.input_ids.push_back(id(rng));
      b.token_type_ids.push_back(t < L / 2 ? 0 : 1);
      b.attention_mask.push_back(1);
    }
    b.lengths.push_back(L);
    std::vector<int64_t> candidates(L - 2);
    std::iota(candidates.begin(), candidates.end(), 1);
    std::shuffle(candidates.begin(), candidates.end(), rng);
    candidates.resize(std::min<int64_t>(masked_per_seq, L - 2));
    std::sort(candidates.begin(), candidates.end());
    for (int64_t t : candidates) {
      b.masked_positions.push_back(i * L + t);
      b.masked_labels.push_back(id(rng));
    }
    b.sop_labels.push_back(bit(rng));
  }
  b.num_tokens = B * L;
  return b;
}

// HF-style labels [B, L]: −100 except at the masked positions.
torch::Tensor labels_all_positions(const train::DeviceBatch& d) {
  auto labels = torch::full({d.input_ids.numel()}, -100, torch::TensorOptions().dtype(torch::kLong));
  labels.index_copy_(0, d.masked_positions, d.masked_labels);
  return labels.view(d.input_ids.sizes());
}

optim::NamedParams named_params(torch::nn::Module& m) {
  optim::NamedParams out;
  for (const auto& item : m.named_parameters(true)) out.emplace_back(item.key(), item.value());
  return out;
}

config::OptimizerConfig optimizer_config(config::OptimizerType type, bool fused) {
  config::OptimizerConfig c;
  c.type = type;
  c.clip_norm = 1.0;
  c.fused = fused;
  return c;
}

// One pretraining step as the trainer does it (PretrainStep), or with the MLM projection at
// every position (HF's way, for the lever comparison); returns the loss (host sync).
double train_step(model::AlbertForPreTraining& m, optim::Optimizer& opt, train::PretrainStep& step,
                  const data::PretrainBatch& b, bool all_positions, config::Precision precision, double lr,
                  const torch::Device& device) {
  if (!all_positions) return step({b}, 0).loss;
  const auto d = train::to_device(b, device);
  opt.zero_grad();
  torch::Tensor loss;
  {
    model::AutocastScope autocast(device, train::uses_bf16(precision));
    auto out = m->forward(d.input_ids, d.token_type_ids, d.attention_mask);  // logits [B, L, V]
    loss = model::mlm_loss(out.prediction_logits, labels_all_positions(d)) + model::sop_loss(out.sop_logits, d.sop_labels);
  }
  loss.backward();
  opt.clip_grad_norm(1.0);
  opt.step(lr);
  opt.zero_grad();
  return loss.item<double>();
}

void forward_step(model::AlbertForPreTraining& m, const data::PretrainBatch& b, bool all_positions,
                  bool sparse_final_layer, config::Precision precision, const torch::Device& device) {
  c10::InferenceMode guard;
  const auto d = train::to_device(b, device);
  model::AutocastScope autocast(device, train::uses_bf16(precision));
  model::ForwardOptions options;
  options.head_outputs_only = sparse_final_layer;
  auto out = m->forward(d.input_ids, d.token_type_ids, d.attention_mask,
                        all_positions ? torch::Tensor() : d.masked_positions, options);
  (void)out.prediction_logits.sum().item<double>();
}

int64_t default_masked(int64_t seq) {
  return std::min<int64_t>(20, std::max<int64_t>(1, std::llround(0.15 * static_cast<double>(seq))));
}

}  // namespace

Spread Spread::of(std::vector<double> samples) {
  Spread s;
  s.samples = samples;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  s.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  s.min = samples.front();
  s.max = samples.back();
  return s;
}

nlohmann::json Spread::to_json() const {
  return {{"median", median}, {"min", min}, {"max", max}, {"samples", samples}};
}

double current_rss_mib() { return read_status_kib("VmRSS:") / 1024.0; }
double peak_rss_mib() { return read_status_kib("VmHWM:") / 1024.0; }

nlohmann::json model_spec_to_json(const ModelBenchSpec& s) {
  return {{"label", s.label},
          {"model", config::model_config_to_json(s.model)},
          {"mode", s.mode},
          {"precision", s.precision == config::Precision::kBf16 ? "bf16" : "fp32"},
          {"optimizer", s.optimizer == config::OptimizerType::kLamb ? "lamb" : "adamw"},
          {"fused_optimizer", s.fused_optimizer},
          {"batch", s.batch},
          {"seq", s.seq},
          {"masked_per_seq", s.masked_per_seq},
          {"mlm_all_positions", s.mlm_all_positions},
          {"full_final_layer", s.full_final_layer},
          {"computation", s.computation},
          {"device", s.device},
          {"eager_attention", s.eager_attention},
          {"kernel_attention", s.kernel_attention},
          {"products", s.products},
          {"warmup", s.warmup},
          {"reps", s.reps},
          {"profile_path", s.profile_path},
          {"seed", s.seed}};
}

ModelBenchSpec model_spec_from_json(const nlohmann::json& j, const config::ModelConfig& model) {
  ModelBenchSpec s;
  s.model = j.contains("model") ? config::model_config_from_json(j.at("model"), "bench spec") : model;
  s.label = j.value("label", s.label);
  s.mode = j.value("mode", s.mode);
  s.precision = j.value("precision", "fp32") == "bf16" ? config::Precision::kBf16 : config::Precision::kFp32;
  s.optimizer = j.value("optimizer", "adamw") == "lamb" ? config::OptimizerType::kLamb : config::OptimizerType::kAdamW;
  s.fused_optimizer = j.value("fused_optimizer", s.fused_optimizer);
  s.batch = j.value("batch", s.batch);
  s.seq = j.value("seq", s.seq);
  s.masked_per_seq = j.value("masked_per_seq", s.masked_per_seq);
  s.mlm_all_positions = j.value("mlm_all_positions", s.mlm_all_positions);
  s.full_final_layer = j.value("full_final_layer", s.full_final_layer);
  s.computation = j.value("computation", s.computation);
  s.device = j.value("device", s.device);
  s.eager_attention = j.value("eager_attention", s.eager_attention);
  s.kernel_attention = j.value("kernel_attention", s.kernel_attention);
  s.products = j.value("products", s.products);
  s.warmup = j.value("warmup", s.warmup);
  s.reps = j.value("reps", s.reps);
  s.profile_path = j.value("profile_path", s.profile_path);
  s.seed = j.value("seed", s.seed);
  return s;
}

nlohmann::json ModelBenchResult::to_json() const {
  return {{"spec", model_spec_to_json(spec)},
          {"threads", threads},
          {"seconds", seconds.to_json()},
          {"tokens_per_s", tokens_per_s},
          {"tokens_per_s_min", tokens_per_s_min},
          {"tokens_per_s_max", tokens_per_s_max},
          {"rss_start_mib", rss_start_mib},
          {"rss_model_mib", rss_model_mib},
          {"peak_rss_mib", peak_rss_mib},
          {"loss_first", loss_first},
          {"loss_last", loss_last},
          {"blas_gflops", blas_gflops},
          {"parameters", parameters},
          {"model_flops_per_step", model_flops_per_step},
          {"achieved_tflops", achieved_tflops},
          {"fused_attention", fused_attention},
          {"attention", attention},
          {"torch_version", TORCH_VERSION}};
}

double model_flops(const ModelBenchSpec& spec) {
  const auto& c = spec.model;
  const double B = static_cast<double>(spec.batch), L = static_cast<double>(spec.seq);
  const double H = static_cast<double>(c.hidden_size), I = static_cast<double>(c.intermediate_size);
  const double E = static_cast<double>(c.embedding_size), V = static_cast<double>(c.vocab_size);
  const double tokens = B * L;
  const double applications = static_cast<double>(c.num_hidden_layers * c.inner_group_num);
  const double per_layer = 2.0 * tokens * (4.0 * H * H + 2.0 * H * I) + 2.0 * 2.0 * B * L * L * H;
  const int64_t masked = spec.masked_per_seq < 0 ? default_masked(spec.seq) : spec.masked_per_seq;
  const double predicted = spec.mlm_all_positions ? tokens : B * static_cast<double>(masked);
  // A sparse final layer runs its attention's queries, output projection and FFN only at the
  // predicted rows and each sequence's first (q·kᵀ and probs·v of a query row: 2 · 2·L·H).
  const bool sparse = !spec.mlm_all_positions && !spec.full_final_layer;
  const double skipped = sparse ? 2.0 * (tokens - predicted - B) * (H * H + 2.0 * H * I + 2.0 * L * H) : 0.0;
  const double heads = 2.0 * predicted * (H * E + E * V) + 2.0 * B * (H * H + 2.0 * H);
  // The position scheme's own terms, asked of it (model/position/registry.h).
  const double scheme = c.position.relative == "none"
                            ? 0.0
                            : model::scheme_flops(c, spec.batch, spec.seq);
  const double forward = 2.0 * tokens * E * H + applications * per_layer - skipped + heads + scheme;
  return spec.mode == "train" ? 3.0 * forward : forward;
}

ModelBenchResult run_model_bench(const ModelBenchSpec& spec_in) {
  ModelBenchResult r;
  r.spec = spec_in;
  auto& spec = r.spec;
  if (spec.mode != "train" && spec.mode != "forward")
    throw Error("bench: mode must be train or forward, got '" + spec.mode + "'");
  if (spec.batch < 1 || spec.seq < 2 || spec.reps < 1 || spec.warmup < 0)
    throw Error("bench: batch >= 1, seq >= 2, reps >= 1 and warmup >= 0 required");
  if (spec.seq > spec.model.max_position_embeddings && spec.model.position.absolute)
    throw Error("bench: seq " + std::to_string(spec.seq) + " exceeds model.max_position_embeddings " +
                std::to_string(spec.model.max_position_embeddings));
  if (spec.masked_per_seq < 0) spec.masked_per_seq = default_masked(spec.seq);
  r.threads = at::get_num_threads();
  r.rss_start_mib = current_rss_mib();

  if (spec.device != "cpu" && spec.device != "cuda")
    throw Error("bench: device must be cpu or cuda, got '" + spec.device + "'");
  if (spec.device == "cuda" && !torch::cuda::is_available())
    throw Error("bench --device cuda: this LibTorch (" TORCH_VERSION ") sees no CUDA device");
  const torch::Device device = spec.device == "cuda" ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);

  model::set_f32_products(model::f32_products_from_name(spec.products));
  torch::manual_seed(spec.seed);
  model::AlbertForPreTraining m(spec.model);
  if (spec.eager_attention) model::set_attention_backend(*m, model::AttentionBackend::kEager);
  if (spec.kernel_attention) model::set_attention_backend(*m, model::AttentionBackend::kCpuKernel);
  {
    auto& first = *m->albert->encoder->groups[0]->layers[0]->attention;
    auto* scheme = m->albert->encoder->scheme_for(0, 0);
    const bool bf16 = train::uses_bf16(spec.precision);
    const auto q = torch::empty({1, first.num_heads, spec.seq, first.head_size},
                                torch::TensorOptions().dtype(bf16 ? torch::kBFloat16 : torch::kFloat));
    r.fused_attention = !spec.eager_attention && model::fused_attention_available() &&
                        first.uses_fused(scheme, /*probs_requested=*/false);
    const bool kernel = spec.device == "cpu" && first.uses_cpu_kernel(scheme, /*probs_requested=*/false, q);
    r.attention = kernel ? "kernel" : r.fused_attention ? "sdpa" : "eager";
    if (kernel) r.fused_attention = false;
  }
  if (!spec.computation.empty()) {
    if (m->albert->encoder->schemes.empty())
      throw Error("bench: computation '" + spec.computation + "' needs a position scheme, got none");
    for (auto& s : m->albert->encoder->schemes)
      if (!s->use_computation(spec.computation))
        throw Error("bench: scheme " + spec.model.position.relative + " has no computation '" + spec.computation + "'");
  }
  m->to(device);
  if (spec.mode == "forward") m->eval();
  else m->train();
  for (const auto& p : m->parameters()) r.parameters += p.numel();
  std::unique_ptr<optim::Optimizer> opt;
  const double lr = 1e-4;
  const optim::LrSchedule schedule(config::ScheduleType::kConstant, lr, 0, int64_t{1} << 40);
  std::unique_ptr<train::PretrainStep> step;
  if (spec.mode == "train") {
    opt = optim::make_optimizer(optimizer_config(spec.optimizer, spec.fused_optimizer), named_params(*m));
    step = std::make_unique<train::PretrainStep>(m, *opt, schedule, 1.0, device, spec.precision);
    step->sparse_final_layer = !spec.full_final_layer;
  }
  r.rss_model_mib = current_rss_mib();

  std::mt19937_64 rng(spec.seed);
  std::vector<data::PretrainBatch> batches;
  for (int i = 0; i < 2; ++i)
    batches.push_back(make_batch(spec.batch, spec.seq, spec.masked_per_seq, spec.model.vocab_size, rng));
  auto run_once = [&](int i) {
    const auto& b = batches[i % batches.size()];
    if (spec.mode == "train")
      return train_step(m, *opt, *step, b, spec.mlm_all_positions, spec.precision, lr, device);
    forward_step(m, b, spec.mlm_all_positions, !spec.full_final_layer, spec.precision, device);
    return 0.0;
  };
  for (int i = 0; i < spec.warmup; ++i) run_once(i);
  std::vector<double> times;
  for (int i = 0; i < spec.reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    const double loss = run_once(i);
    times.push_back(seconds_since(t0));
    if (i == 0) r.loss_first = loss;
    r.loss_last = loss;
  }
  r.seconds = Spread::of(times);
  const double tokens = static_cast<double>(spec.batch * spec.seq);
  r.tokens_per_s = tokens / r.seconds.median;
  r.tokens_per_s_min = tokens / r.seconds.max;
  r.tokens_per_s_max = tokens / r.seconds.min;
  r.model_flops_per_step = model_flops(spec);
  r.achieved_tflops = r.model_flops_per_step / r.seconds.median / 1e12;

  if (!spec.profile_path.empty()) {
    const int steps = 2;
    OpProfiler prof;
    prof.start();
    for (int i = 0; i < steps; ++i) run_once(i);
    prof.stop();
    const auto s = prof.summary();
    r.blas_gflops = s.blas_us > 0 ? s.blas_flops / (s.blas_us * 1e3) : 0;
    std::ostringstream text;
    text << "# tisa-train bench profile: " << model_spec_to_json(spec).dump() << "\n# threads " << r.threads
         << ", LibTorch " << TORCH_VERSION << ", " << steps << " profiled steps (timed median without profiler: "
         << r.seconds.median * 1e3 << " ms/step)\n";
    text << prof.table(steps, 30);
    fs::write_file_atomic(spec.profile_path, text.str());
    prof.write_chrome_trace(spec.profile_path + ".trace.json", 20000);
  }
  r.peak_rss_mib = peak_rss_mib();
  return r;
}

nlohmann::json LossCurve::to_json() const { return {{"fp32", fp32}, {"bf16", bf16}}; }

LossCurve compare_precisions(const config::ModelConfig& model_config, int64_t batch, int64_t seq, int64_t steps,
                             double lr, uint64_t seed) {
  LossCurve curve;
  for (auto precision : {config::Precision::kFp32, config::Precision::kBf16}) {
    torch::manual_seed(seed);
    model::AlbertForPreTraining m(model_config);
    m->train();
    auto opt = optim::make_optimizer(optimizer_config(config::OptimizerType::kAdamW, true), named_params(*m));
    const optim::LrSchedule schedule(config::ScheduleType::kConstant, lr, 0, int64_t{1} << 40);
    train::PretrainStep step(m, *opt, schedule, 1.0, torch::kCPU, precision);
    std::mt19937_64 rng(seed + 1);
    // A small fixed pool of batches cycled, so that the loss can fall (memorisation) in few steps.
    std::vector<data::PretrainBatch> pool;
    for (int i = 0; i < 4; ++i) pool.push_back(make_batch(batch, seq, default_masked(seq), model_config.vocab_size, rng));
    auto& out = precision == config::Precision::kBf16 ? curve.bf16 : curve.fp32;
    for (int64_t t = 0; t < steps; ++t) out.push_back(step({pool[t % pool.size()]}, t).loss);
  }
  return curve;
}

}  // namespace tisa::bench
