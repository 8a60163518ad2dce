// `tisa-train bench` (issue 9): throughput and peak memory of the pretraining step and of the
// forward pass for a list of configurations, the machine's matrix-product rate (--gemm), the data
// pipeline (--data) and a bf16-vs-fp32 loss-curve check (--loss-check). Prints a table; --json
// writes every result (with its spec, thread count and LibTorch version) as JSON.
//
// Each model configuration runs in a fresh child process (`tisa-nn bench --only <spec>`), so
// that its peak RSS (VmHWM) is its own and one configuration's allocator state cannot speed up
// or slow down the next. --in-process skips that (peak memory is then cumulative).
//
// Scheme labels (--scheme, comma-separated), bench::apply_scheme_label (bench.h):
//   [<computation>-]<position>[-<preset>], position = absolute, any scheme of the registry,
//   absolute+<scheme> or absolute_<scheme>; e.g. absolute, tisa, absolute_tisa, rope,alibi,
//   shaw-hf (HF's relative_key), naive-shaw (through an [L, L, d] table), gather-shaw-hf.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>
#include <torch/version.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "bench/bench.h"
#include "cli_nn/commands.h"
#include "common/cli_checks.h"
#include "common/cpu_features.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/subprocess.h"
#include "config/config_loader.h"
#include "model/cpu_linear.h"
#include "train/precision_choice.h"
#include "train/runtime_info.h"

namespace tisa::cli {
namespace {

struct BenchArgs {
  std::string config_path;
  std::vector<std::string> overrides;
  std::vector<std::string> schemes{"absolute"};
  std::vector<std::string> modes{"train"};
  std::vector<std::string> shapes{"8x128"};
  std::vector<std::string> precisions{"fp32"};
  std::vector<std::string> attentions{"auto"};
  std::string device = "cpu";
  double peak_tflops = 0;
  std::string optimizer = "adamw";
  std::string optimizer_path = "fused";
  int threads = 0;
  int interop_threads = 0;
  int reps = 5;
  int warmup = 2;
  int64_t masked_per_seq = -1;
  bool mlm_all_positions = false;
  std::string final_layer = "sparse";
  std::string products = "auto";
  std::string profile_dir;
  bool gemm = false;
  bool data = false;
  std::string data_dataset;
  int64_t data_workers = 1;
  int64_t data_batches = 200;
  int64_t loss_check = 0;
  bool in_process = false;
  std::string json_path;
  std::string only;         // internal: one spec as JSON
  std::string result_path;  // internal: where --only writes its result
  bool model_options_given = false;  // --scheme/--mode/--precision given explicitly
};

std::vector<std::string> split_list(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    std::stringstream ss(item);
    std::string part;
    while (std::getline(ss, part, ','))
      if (!part.empty()) out.push_back(part);
  }
  return out;
}

// "8x128" → {8, 128}: both whole positive numbers, nothing else in the text.
std::pair<int64_t, int64_t> parse_shape(const std::string& s) {
  const auto x = s.find('x');
  try {
    if (x == std::string::npos) throw std::invalid_argument(s);
    size_t used_b = 0, used_l = 0;
    const std::string bs = s.substr(0, x), ls = s.substr(x + 1);
    const int64_t b = std::stoll(bs, &used_b), l = std::stoll(ls, &used_l);
    if (used_b != bs.size() || used_l != ls.size() || b <= 0 || l <= 0) throw std::invalid_argument(s);
    return {b, l};
  } catch (const std::exception&) {
    throw Error("bench --shape: expected BATCHxSEQ of positive whole numbers such as 8x128, got '" + s + "'");
  }
}

// CLI11 check of --shape (a usage error, exit 2): every comma-separated item parses.
const CLI::Validator kShapeList(
    [](std::string& value) -> std::string {
      try {
        for (const auto& item : split_list({value})) parse_shape(item);
      } catch (const Error& e) {
        return e.what();
      }
      return "";
    },
    "BATCHxSEQ[,...]");

void set_threads(const BenchArgs& a) {
  if (a.interop_threads > 0) at::set_num_interop_threads(a.interop_threads);
  if (a.threads > 0) at::set_num_threads(a.threads);
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// Model-FLOPs utilisation column: achieved model TFLOP/s over the device's dense peak.
std::string mfu_text(const nlohmann::json& r, double peak_tflops) {
  if (peak_tflops <= 0) return "-";
  return fmt("%.1f%%", 100.0 * r.value("achieved_tflops", 0.0) / peak_tflops);
}

void print_model_table(std::ostream& os, const std::vector<nlohmann::json>& results, double peak_tflops) {
  char line[360];
  std::snprintf(line, sizeof line, "%-16s %-7s %-4s %-6s %-7s %3s %10s %17s %9s %9s %9s %8s %8s %6s\n", "scheme",
                "mode", "prec", "attn", "BxL", "thr", "tokens/s", "[min - max]", "ms/step", "peak MiB", "model MiB",
                "loss", "TFLOP/s", "MFU");
  os << line;
  for (const auto& r : results) {
    const auto& s = r.at("spec");
    const std::string shape = std::to_string(s.at("batch").get<int64_t>()) + "x" + std::to_string(s.at("seq").get<int64_t>());
    if (r.contains("error")) {
      std::snprintf(line, sizeof line, "%-16s %-7s %-4s %-7s  failed: %s\n", s.value("label", "").c_str(),
                    s.value("mode", "").c_str(), s.value("precision", "").substr(0, 4).c_str(), shape.c_str(),
                    r.at("error").get<std::string>().c_str());
      os << line;
      continue;
    }
    std::snprintf(line, sizeof line, "%-16s %-7s %-4s %-5s %-7s %3d %10.1f %17s %9.1f %9.0f %9.0f %8s %8.2f %6s\n",
                  s.at("label").get<std::string>().c_str(), s.at("mode").get<std::string>().c_str(),
                  s.at("precision").get<std::string>().substr(0, 4).c_str(),
                  r.value("attention", std::string(r.value("fused_attention", false) ? "sdpa" : "eager")).c_str(), shape.c_str(), r.at("threads").get<int>(),
                  r.at("tokens_per_s").get<double>(),
                  ("[" + fmt("%.1f", r.at("tokens_per_s_min").get<double>()) + " - " +
                   fmt("%.1f", r.at("tokens_per_s_max").get<double>()) + "]")
                      .c_str(),
                  r.at("seconds").at("median").get<double>() * 1e3, r.at("peak_rss_mib").get<double>(),
                  r.at("rss_model_mib").get<double>() - r.at("rss_start_mib").get<double>(),
                  s.at("mode") == "train" ? fmt("%.3f", r.at("loss_last").get<double>()).c_str() : "-",
                  r.value("achieved_tflops", 0.0), mfu_text(r, peak_tflops).c_str());
    os << line;
  }
}

// Runs one model spec in a child process; returns its result JSON (or {"spec", "error"}).
nlohmann::json run_child_spec(const BenchArgs& a, const bench::ModelBenchSpec& spec) {
  static int counter = 0;
  const std::string result = (std::filesystem::temp_directory_path() /
                              ("tisa-bench-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".json"))
                                 .string();
  std::vector<std::string> argv = {sibling_executable("tisa-nn"), "bench", "--only",
                                   bench::model_spec_to_json(spec).dump(), "--result", result};
  if (a.threads > 0) argv.insert(argv.end(), {"--threads", std::to_string(a.threads)});
  if (a.interop_threads > 0) argv.insert(argv.end(), {"--interop-threads", std::to_string(a.interop_threads)});
  const int code = run_child(argv);
  nlohmann::json out;
  if (code == 0 && fs::exists(result)) {
    out = nlohmann::json::parse(fs::read_file(result));
  } else {
    out = {{"spec", bench::model_spec_to_json(spec)},
           {"error", "child exited with code " + std::to_string(code) + (code == 137 ? " (killed: out of memory?)" : "")}};
  }
  std::filesystem::remove(result);
  return out;
}

// --only: one model configuration in this process (the child of run_child_spec), result to --result.
void run_one_spec_here(const BenchArgs& a) {
  const auto spec = bench::model_spec_from_json(nlohmann::json::parse(a.only), {});
  const auto r = bench::run_model_bench(spec);
  if (a.result_path.empty()) throw Error("bench --only needs --result");
  fs::write_file_atomic(a.result_path, r.to_json().dump(2));
}

// What decides the numbers besides the specs (LibTorch, BLAS, threads), printed and returned.
nlohmann::json describe_machine(std::ostream& os) {
  const auto info = train::runtime_info();
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  os << "LibTorch " << TORCH_VERSION << ", BLAS " << info.blas_library << ", intra-op threads " << at::get_num_threads()
     << ", OMP_WAIT_POLICY " << info.omp_wait_policy << ", OPENBLAS_CORETYPE " << (coretype ? coretype : "(unset)")
     << ", ATen CPU kernels " << info.aten_cpu_capability << ", allocator " << info.allocator
     << "\nCPU " << cpu_model_name() << ", native bf16: " << (cpu_bf16_support().native ? "yes" : "no")
     << ", bf16 products faster than f32: " << (cpu_bf16_support().fast_products ? "yes" : "no") << " ("
     << cpu_bf16_support().why << ")\nFloat32 linear layers: " << model::f32_products_description() << "\n";
  return {{"torch_version", TORCH_VERSION},
          {"blas", info.blas_library},
          {"intra_op_threads", at::get_num_threads()},
          {"inter_op_threads", at::get_num_interop_threads()},
          {"omp_wait_policy", info.omp_wait_policy},
          {"openblas_coretype", coretype ? coretype : ""},
          {"aten_cpu_capability", info.aten_cpu_capability},
          {"allocator", info.allocator},
          {"cpu", cpu_model_name()},
          {"cpu_native_bf16", cpu_bf16_support().native},
          {"cpu_fast_bf16_products", cpu_bf16_support().fast_products},
          {"f32_linear_products", model::f32_products_name(model::f32_products())}};
}

// --gemm: the matrix products of the model's sizes at the first shape's token count.
nlohmann::json bench_gemm(const BenchArgs& a, const config::ModelConfig& m, std::ostream& os) {
  nlohmann::json gemms = nlohmann::json::array();
  char line[200];
  std::snprintf(line, sizeof line, "\n%-10s %6s %6s %6s %10s %9s\n", "dtype", "m", "k", "n", "GFLOP/s", "ms");
  os << line;
  int64_t tokens = 1024;
  if (!a.shapes.empty()) {
    auto [b, l] = parse_shape(split_list(a.shapes).front());
    tokens = b * l;
  }
  for (auto g : bench::default_gemm_specs(tokens, m.hidden_size, m.intermediate_size)) {
    g.reps = std::max(a.reps, 3);
    const auto r = bench::run_gemm(g);
    std::snprintf(line, sizeof line, "%-10s %6lld %6lld %6lld %10.1f %9.2f\n", g.dtype.c_str(), (long long)g.m,
                  (long long)g.k, (long long)g.n, r.gflops_median, r.seconds.median * 1e3);
    os << line << std::flush;
    gemms.push_back(r.to_json());
  }
  return gemms;
}

// --data: example building + loading at the first shape.
nlohmann::json bench_data(const BenchArgs& a, std::ostream& os) {
  bench::DataBenchSpec d;
  d.dataset = a.data_dataset;
  d.workers = a.data_workers;
  d.batches = a.data_batches;
  d.reps = std::max(1, std::min(a.reps, 5));
  auto [b, l] = parse_shape(split_list(a.shapes).front());
  d.batch = b;
  d.seq = l;
  const auto r = bench::run_data_bench(d);
  char line[300];
  std::snprintf(line, sizeof line,
                "\ndata pipeline (%s, %lldx%lld, %lld workers): %.0f examples/s, %.0f tokens/s [%.3f - %.3f s per %lld batches]\n",
                r.source.c_str(), (long long)d.batch, (long long)d.seq, (long long)d.workers, r.examples_per_s,
                r.tokens_per_s, r.seconds.min, r.seconds.max, (long long)d.batches);
  os << line << std::flush;
  return r.to_json();
}

// --loss-check N: N training steps in fp32 and in bf16 from the same start, losses side by side.
nlohmann::json bench_loss_check(const BenchArgs& a, const config::ModelConfig& model, std::ostream& os) {
  auto [b, l] = parse_shape(split_list(a.shapes).front());
  auto m = model;
  bench::apply_scheme_label(split_list(a.schemes).front(), m);
  const auto curve = bench::compare_precisions(m, b, l, a.loss_check, 1e-4, 1);
  os << "\nloss check (AdamW lr 1e-4, " << b << "x" << l << "): step fp32 bf16 diff\n";
  double max_diff = 0;
  for (size_t t = 0; t < curve.fp32.size(); ++t) {
    const double diff = curve.bf16[t] - curve.fp32[t];
    max_diff = std::max(max_diff, std::abs(diff));
    os << fmt("%4.0f", static_cast<double>(t)) << fmt(" %.4f", curve.fp32[t]) << fmt(" %.4f", curve.bf16[t])
       << fmt(" %+.4f", diff) << "\n";
  }
  os << "max |bf16 - fp32| = " << max_diff << "\n";
  return curve.to_json();
}

// One model configuration of the --scheme × --mode × --precision × --attention × --shape grid.
bench::ModelBenchSpec model_spec(const BenchArgs& a, const config::ModelConfig& model, const std::string& shape,
                                 const std::string& scheme, const std::string& mode, const std::string& precision,
                                 const std::string& attention) {
  bench::ModelBenchSpec spec;
  spec.label = scheme;
  spec.model = model;
  spec.computation = bench::apply_scheme_label(scheme, spec.model);
  spec.mode = mode;
  if (precision != "fp32" && precision != "bf16") throw Error("bench --precision: fp32 or bf16, got '" + precision + "'");
  // Measured as asked (bf16 stays bf16), with the warning a training run would give on a CPU
  // without native bf16, so that a row slowed by the missing instructions is not read as the model's cost.
  spec.precision = train::choose_precision(precision == "bf16" ? config::Precision::kBf16 : config::Precision::kFp32,
                                           c10::Device(a.device), "[bench]");
  if (a.optimizer != "adamw" && a.optimizer != "lamb")
    throw Error("bench --optimizer: adamw or lamb, got '" + a.optimizer + "'");
  spec.optimizer = a.optimizer == "lamb" ? config::OptimizerType::kLamb : config::OptimizerType::kAdamW;
  if (a.optimizer_path != "fused" && a.optimizer_path != "reference")
    throw Error("bench --optimizer-path: fused or reference, got '" + a.optimizer_path + "'");
  spec.fused_optimizer = a.optimizer_path == "fused";
  std::tie(spec.batch, spec.seq) = parse_shape(shape);
  spec.masked_per_seq = a.masked_per_seq;
  spec.mlm_all_positions = a.mlm_all_positions;
  if (a.final_layer != "sparse" && a.final_layer != "full")
    throw Error("bench --final-layer: sparse or full, got '" + a.final_layer + "'");
  spec.full_final_layer = a.final_layer == "full";
  model::f32_products_from_name(a.products);  // an unknown name fails here, before any child starts
  spec.products = a.products;
  spec.warmup = a.warmup;
  spec.reps = a.reps;
  spec.device = a.device;
  if (attention != "auto" && attention != "eager" && attention != "kernel")
    throw Error("bench --attention: auto, eager or kernel, got '" + attention + "'");
  spec.eager_attention = attention == "eager";
  spec.kernel_attention = attention == "kernel";
  if (!a.profile_dir.empty()) {
    fs::create_directories(a.profile_dir);
    std::string name = scheme + "-" + mode + "-" + precision + "-" + attention + "-" + shape + ".txt";
    for (auto& ch : name)
      if (ch == '+') ch = '_';
    spec.profile_path = (std::filesystem::path(a.profile_dir) / name).string();
  }
  return spec;
}

// Every model configuration of the grid, each in its own child process unless --in-process.
std::vector<nlohmann::json> bench_models(const BenchArgs& a, const config::ModelConfig& model) {
  std::vector<nlohmann::json> results;
  for (const auto& shape : split_list(a.shapes))
    for (const auto& scheme : split_list(a.schemes))
      for (const auto& mode : split_list(a.modes))
        for (const auto& precision : split_list(a.precisions))
          for (const auto& attention : split_list(a.attentions)) {
            const auto spec = model_spec(a, model, shape, scheme, mode, precision, attention);
            spdlog::info("[bench] {} {} {} {} {} {}", scheme, mode, precision, attention, shape, a.device);
            results.push_back(a.in_process ? bench::run_model_bench(spec).to_json() : run_child_spec(a, spec));
          }
  return results;
}

void run_bench(const BenchArgs& a) {
  set_threads(a);
  if (!a.only.empty()) return run_one_spec_here(a);  // internal: the child of run_child_spec
  train::warn_about_slow_runtime();
  const auto cfg = a.config_path.empty() ? config::config_from_overrides(a.overrides)
                                         : config::load_config(a.config_path, a.overrides);
  std::ostream& os = a.json_path == "-" ? std::cerr : std::cout;  // stdout keeps the JSON clean
  nlohmann::json all = describe_machine(os);
  if (a.gemm) all["gemm"] = bench_gemm(a, cfg.model, os);
  if (a.data) all["data"] = bench_data(a, os);
  if (a.loss_check > 0) all["loss_check"] = bench_loss_check(a, cfg.model, os);
  // Model configurations (none when only --gemm / --data / --loss-check were asked for).
  if (!(a.gemm || a.data || a.loss_check > 0) || a.model_options_given) {
    const std::vector<nlohmann::json> results = bench_models(a, cfg.model);
    os << "\n";
    print_model_table(os, results, a.peak_tflops);
    all["models"] = results;
  }
  if (a.json_path == "-") std::cout << all.dump(2) << "\n";
  else if (!a.json_path.empty()) fs::write_file_atomic(a.json_path, all.dump(2) + "\n");
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "measure training/inference throughput, GEMM rate, data pipeline");
  cmd->add_option("--config", args->config_path, "YAML config (model section used; default: albert-base sizes)");
  cmd->add_option("--set", args->overrides, "override a config key, e.g. --set model.hidden_size=256");
  cmd->add_option("--scheme", args->schemes,
                  "position schemes, comma-separated: [<computation>-]<position>[-<preset>] with position = "
                  "absolute, a scheme of model.position.relative, absolute+<scheme> or absolute_<scheme>; e.g. "
                  "absolute_tisa, rope, shaw-hf, naive-shaw (computations and presets are the scheme's own)");
  cmd->add_option("--mode", args->modes, "train (forward+backward+optimiser) and/or forward, comma-separated");
  cmd->add_option("--shape", args->shapes, "BATCHxSEQ list, e.g. 8x128,2x512")->check(kShapeList);
  cmd->add_option("--precision", args->precisions, "fp32 and/or bf16 (autocast), comma-separated");
  cmd->add_option("--attention", args->attentions,
                  "auto (the CPU kernel for bf16 on AVX512_BF16 and for fp32 on AVX-512, else fused SDPA where this LibTorch "
                  "has it and the scheme allows), eager and/or kernel (the CPU kernel wherever the layer allows it), comma-separated");
  cmd->add_option("--device", args->device, "cpu or cuda")->check(device_name());
  cmd->add_option("--peak-tflops", args->peak_tflops,
                  "the device's dense peak (e.g. 989 for H100/H200 bf16): adds model-FLOPs utilisation");
  cmd->add_option("--optimizer", args->optimizer, "adamw or lamb");
  cmd->add_option("--optimizer-path", args->optimizer_path,
                  "fused (the CPU float32 kernel, optimizer.fused: true) or reference (the per-op path)")
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "intra-op threads (0 = LibTorch default)")
      ->check(integer_between(args->threads, 0, 1024));
  cmd->add_option("--interop-threads", args->interop_threads, "inter-op threads (0 = LibTorch default)")
      ->check(integer_between(args->interop_threads, 0, 1024));
  cmd->add_option("--reps", args->reps, "timed repetitions (median and spread reported)")
      ->check(integer_at_least(args->reps, 1));
  cmd->add_option("--warmup", args->warmup, "untimed repetitions first")->check(integer_at_least(args->warmup, 0));
  cmd->add_option("--masked-per-seq", args->masked_per_seq, "masked positions per sequence (-1: min(20, 15%))")
      ->check(integer_at_least(args->masked_per_seq, -1));
  cmd->add_flag("--mlm-all-positions", args->mlm_all_positions, "vocabulary projection at every position (as HF)");
  cmd->add_option("--final-layer", args->final_layer,
                  "sparse (the final layer's queries (on the CPU attention kernel), output projection and FFN only "
                  "where the heads read, as the trainer) or full (every position)")
      ->capture_default_str();
  cmd->add_option("--products", args->products,
                  "library of the float32 linear layers' products: auto (oneDNN's sgemm where built and the CPU "
                  "has AVX-512, else BLAS), blas or onednn")
      ->capture_default_str();
  cmd->add_option("--profile", args->profile_dir, "folder: write an operator profile (+ chrome trace) per config");
  cmd->add_flag("--gemm", args->gemm, "measure the matrix-product rate (f32 on BLAS, f32 on oneDNN where built, bf16)");
  cmd->add_flag("--data", args->data, "measure the data pipeline (example builder + loader)");
  cmd->add_option("--data-dataset", args->data_dataset, "prepared dataset for --data (default: synthetic)");
  cmd->add_option("--data-workers", args->data_workers, "loader worker threads for --data")
      ->check(integer_between(args->data_workers, 0, 1024));
  cmd->add_option("--data-batches", args->data_batches, "batches per repetition for --data")
      ->check(integer_at_least(args->data_batches, 1));
  cmd->add_option("--loss-check", args->loss_check, "train N steps in fp32 and bf16 and compare the losses")
      ->check(integer_at_least(args->loss_check, 0));
  cmd->add_flag("--in-process", args->in_process, "run model configs in this process (peak memory cumulative)");
  cmd->add_option("--json", args->json_path, "write all results as JSON to this file ('-': stdout, table to stderr)");
  cmd->add_option("--only", args->only, "(internal) run one spec given as JSON")->group("");
  cmd->add_option("--result", args->result_path, "(internal) result file of --only")->group("");
  cmd->callback([args, cmd] {
    args->model_options_given =
        cmd->count("--scheme") + cmd->count("--mode") + cmd->count("--precision") + cmd->count("--attention") > 0;
    run_bench(*args);
  });
}

}  // namespace tisa::cli
