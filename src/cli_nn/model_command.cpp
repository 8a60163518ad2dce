// `tisa-train model`: inspect or run a model.
//   model forward --model DIR --inputs FILE.safetensors --output FILE.safetensors
//       Runs a Hugging Face-layout model directory (config.json + model.safetensors) in eval mode
//       on input_ids / token_type_ids / attention_mask (I64 [B, T]) and, when present, labels
//       (MLM labels with −100 for a pretraining model, class ids or float targets for a sequence
//       model) and sentence_order_label. Writes F32 last_hidden_state, pooler_output, and
//       prediction_logits + sop_logits (AlbertForPreTraining) or logits (sequence model), plus
//       loss (and mlm_loss, sop_loss) when labels are given. --all-outputs adds embedding_output,
//       hidden_states.<i> and attentions.<i> (the names of golden/hf_albert/outputs).
//   model summary --config X.yaml [--set key=value]... [--seq-length N]
//       Parameters per group, the positional parameter count (the paper's table) and forward
//       FLOPs per token at the given length.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

#include "cli_nn/commands.h"
#include "common/cli_checks.h"
#include "common/error.h"
#include "common/output_guard.h"
#include "config/config_loader.h"
#include "config/position_settings.h"
#include "config/position_variant.h"
#include "model/albert.h"
#include "model/autocast.h"
#include "model/hf_checkpoint.h"
#include "model/position/registry.h"
#include "model/tensor_io.h"

namespace tisa::cli {
namespace {

struct ForwardArgs {
  std::string model_dir, inputs, output, device = "cpu";
  bool bf16 = false, all_outputs = false;
};

// Every input tensor in range for the model, so that a bad file is one sentence naming the tensor
// rather than an index error (or an abort) inside an embedding lookup.
void check_forward_inputs(const model::TensorMap& in, const model::HfConfig& hf, const std::string& file) {
  const auto& c = hf.model;
  // `ignored`: a value allowed outside [lo, hi) (the -100 of unscored MLM positions).
  auto check = [&](const char* key, int64_t lo, int64_t hi, const std::string& meaning,
                   std::optional<int64_t> ignored = std::nullopt) {
    if (!in.count(key)) return;
    auto t = in.at(key);
    if (t.is_floating_point() || t.scalar_type() == torch::kBool)
      throw Error(file + ": " + key + " has dtype " + std::string(c10::toString(t.scalar_type())) +
                  ", expected integers (I64)");
    if (ignored) t = t.masked_select(t != *ignored);
    if (t.numel() == 0) return;
    const int64_t min = t.min().item<int64_t>(), max = t.max().item<int64_t>();
    if (min < lo || max >= hi)
      throw Error(file + ": " + key + " holds values from " + std::to_string(min) + " to " + std::to_string(max) +
                  ", expected " + meaning + " in [" + std::to_string(lo) + ", " + std::to_string(hi) + ")");
  };
  const auto& ids = in.at("input_ids");
  if (ids.dim() != 2 || ids.size(0) < 1 || ids.size(1) < 1)
    throw Error(file + ": input_ids must be [B, T] with B, T >= 1, got " + c10::str(ids.sizes()));
  for (const char* key : {"token_type_ids", "attention_mask"})
    if (in.at(key).sizes() != ids.sizes())
      throw Error(file + ": " + key + " has shape " + c10::str(in.at(key).sizes()) + ", input_ids " +
                  c10::str(ids.sizes()));
  if (ids.size(1) > c.max_position_embeddings)
    throw Error(file + ": input_ids has " + std::to_string(ids.size(1)) + " positions but the model has " +
                std::to_string(c.max_position_embeddings) + " (max_position_embeddings)");
  check("input_ids", 0, c.vocab_size, "token ids of the model's vocabulary");
  check("token_type_ids", 0, c.type_vocab_size, "token types");
  check("attention_mask", 0, 2, "0 or 1");
  check("sentence_order_label", 0, 2, "0 or 1");
  if (in.count("labels") && hf.architecture == model::kPretrainingArchitecture)
    check("labels", 0, c.vocab_size, "token ids (or -100 where no prediction is scored)", -100);
  else if (in.count("labels") && hf.num_labels > 1)
    check("labels", 0, hf.num_labels, "class ids");
}

void run_forward(const ForwardArgs& a) {
  const torch::Device device(a.device);
  if (device.is_cuda() && !torch::cuda::is_available()) throw Error("--device cuda: CUDA is not available");
  std::vector<std::string> inputs = model_folder_inputs(a.model_dir);
  inputs.push_back(a.inputs);
  check_output_is_not_input("--output", a.output, inputs);
  auto m = model::load_hf_model(a.model_dir, device);
  m.module().eval();
  auto in = model::load_tensor_file(a.inputs).tensors;
  for (const char* key : {"input_ids", "token_type_ids", "attention_mask"})
    if (!in.count(key)) throw Error(a.inputs + ": missing tensor '" + key + "' (I64 [B, T])");
  check_forward_inputs(in, m.config, a.inputs);
  const auto& ids = in.at("input_ids");
  torch::NoGradGuard no_grad;
  model::AutocastScope autocast(device, a.bf16);
  model::ForwardOptions opts;
  opts.hidden_states = opts.attentions = a.all_outputs;
  model::TensorMap out;
  model::EncoderOutput enc;
  if (m.pretraining) {
    auto r = m.pretraining->forward(ids, in.at("token_type_ids"), in.at("attention_mask"), {}, opts);
    enc = r.encoder;
    out["prediction_logits"] = r.prediction_logits;
    out["sop_logits"] = r.sop_logits;
    if (in.count("labels")) {
      auto mlm = model::mlm_loss(r.prediction_logits, in.at("labels"));
      out["mlm_loss"] = mlm;
      out["loss"] = mlm;
      if (in.count("sentence_order_label")) {
        auto sop = model::sop_loss(r.sop_logits, in.at("sentence_order_label"));
        out["sop_loss"] = sop;
        out["loss"] = mlm + sop;
      }
    }
  } else {
    auto r = m.classification->forward(ids, in.at("token_type_ids"), in.at("attention_mask"), opts);
    enc = r.encoder;
    out["logits"] = r.logits;
    if (in.count("labels")) out["loss"] = model::classification_loss(r.logits, in.at("labels"));
  }
  out["last_hidden_state"] = enc.last_hidden_state;
  out["pooler_output"] = enc.pooler_output;
  if (a.all_outputs) {
    out["embedding_output"] = enc.embedding_output;
    for (size_t i = 0; i < enc.hidden_states.size(); ++i) out["hidden_states." + std::to_string(i)] = enc.hidden_states[i];
    for (size_t i = 0; i < enc.attentions.size(); ++i) out["attentions." + std::to_string(i)] = enc.attentions[i];
  }
  for (auto& [k, v] : out) v = v.to(torch::kCPU, torch::kFloat);
  std::map<std::string, std::string> meta{{"architecture", m.config.architecture}};
  if (out.count("loss")) meta["loss"] = std::to_string(out.at("loss").item<double>());
  model::save_tensor_file(a.output, out, meta);
  spdlog::info("[model] forward {} on {} examples → {} ({} tensors){}", m.config.architecture, ids.size(0), a.output,
               out.size(), out.count("loss") ? fmt::format(", loss {:.6f}", out.at("loss").item<double>()) : "");
}

// Forward FLOPs per token (multiply-add = 2 FLOPs) of the encoder at sequence length T.
double encoder_flops_per_token(const config::ModelConfig& c, int64_t T) {
  const double H = c.hidden_size, E = c.embedding_size, I = c.intermediate_size;
  const double A = c.num_attention_heads, d = H / A;
  const double layers = static_cast<double>(c.num_hidden_layers * c.inner_group_num);
  double per_layer = 2 * (4 * H * H + 2 * H * I)  // q, k, v, dense; ffn, ffn_output
                     + 2 * 2 * T * H;             // q·kᵀ and α·v
  (void)A;
  (void)d;
  // The scheme's own terms, asked of it (one sequence of T tokens, every layer application).
  const double scheme = model::scheme_flops(c, 1, T) / static_cast<double>(T);
  return 2 * E * H + layers * per_layer + scheme;
}

void run_summary(const std::string& config_path, const std::vector<std::string>& overrides, int64_t seq_length) {
  auto cfg = config::load_config(config_path, overrides);
  const auto& c = cfg.model;
  torch::NoGradGuard no_grad;
  model::AlbertForPreTraining net(c);
  std::map<std::string, int64_t> groups;
  int64_t total = 0;
  const std::string scheme = c.position.relative;
  const std::string scheme_prefix = "albert.encoder." + scheme + ".";
  for (const auto& p : net->named_parameters(true)) {
    const std::string& n = p.key();
    std::string g;
    if (n.rfind("albert.embeddings.", 0) == 0) g = "embeddings";
    else if (n.rfind("albert.encoder.embedding_hidden_mapping_in", 0) == 0) g = "embedding projection";
    else if (n.rfind("albert.encoder.albert_layer_groups", 0) == 0) g = "shared layers";
    else if (n.rfind(scheme_prefix, 0) == 0) g = "position scheme (" + scheme + ")";
    else if (n.rfind("albert.pooler", 0) == 0) g = "pooler";
    else if (n.rfind("predictions.", 0) == 0) g = "MLM head (decoder tied)";
    else g = "SOP head";
    groups[g] += p.value().numel();
    total += p.value().numel();
  }
  std::printf("model: V %ld E %ld H %ld L %ld (groups %ld × inner %ld) A %ld I %ld P %ld\n", (long)c.vocab_size,
              (long)c.embedding_size, (long)c.hidden_size, (long)c.num_hidden_layers, (long)c.num_hidden_groups,
              (long)c.inner_group_num, (long)c.num_attention_heads, (long)c.intermediate_size,
              (long)c.max_position_embeddings);
  std::printf("position: %s\n", model::describe_position(c).c_str());
  std::printf("%-26s %14s\n", "parameters", "count");
  for (const auto& [g, n] : groups) std::printf("%-26s %14ld\n", g.c_str(), (long)n);
  std::printf("%-26s %14ld\n", "total", (long)total);
  std::printf("%-26s %14ld\n", "positional (paper table)", (long)model::positional_parameter_count(c));
  std::printf("position scheme FLOPs at T=%ld (forward, one sequence, all layers): %.4g\n", (long)seq_length,
              model::scheme_flops(c, 1, seq_length));
  const double f = encoder_flops_per_token(c, seq_length);
  std::printf("encoder forward FLOPs/token at T=%ld: %.4g (training ≈ 3× = %.4g; MLM head per predicted token %.4g)\n",
              (long)seq_length, f, 3 * f, 2.0 * (c.hidden_size * c.embedding_size + c.embedding_size * c.vocab_size));
}

// `model variants`: every position variant name, one per line; with --check, the names of a
// comma-separated list are checked instead (the first unknown one is an error naming the forms).
void run_variants(const std::string& check) {
  if (check.empty()) {
    for (const auto& name : config::position_variant_names()) std::printf("%s\n", name.c_str());
    return;
  }
  std::stringstream list(check);
  config::ModelConfig probe;
  for (std::string name; std::getline(list, name, ',');) config::apply_position_variant(name, probe, "model variants --check");
}

}  // namespace

void add_model_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("model", "inspect or run a model (forward, summary, schemes, variants)");
  cmd->require_subcommand(1);

  auto fwd = std::make_shared<ForwardArgs>();
  auto* f = cmd->add_subcommand("forward", "run a model directory on inputs from a safetensors file (eval mode)");
  f->add_option("--model", fwd->model_dir, "model directory (config.json + model.safetensors)")->required();
  f->add_option("--inputs", fwd->inputs, "safetensors with input_ids, token_type_ids, attention_mask [, labels, sentence_order_label]")
      ->required();
  f->add_option("--output", fwd->output, "safetensors file to write")->required();
  f->add_option("--device", fwd->device, "cpu or cuda")->check(device_name());
  f->add_flag("--bf16", fwd->bf16, "bf16 autocast");
  f->add_flag("--all-outputs", fwd->all_outputs, "also write embedding_output, hidden_states.<i>, attentions.<i>");
  f->callback([fwd] { run_forward(*fwd); });

  auto config_path = std::make_shared<std::string>();
  auto overrides = std::make_shared<std::vector<std::string>>();
  auto seq = std::make_shared<int64_t>(512);
  auto* s = cmd->add_subcommand("summary", "parameters per group, positional parameters, FLOPs per token");
  s->add_option("--config", *config_path, "YAML config")->required();
  s->add_option("--set", *overrides, "override key.path=value (repeatable)");
  s->add_option("--seq-length", *seq, "sequence length for the FLOPs estimate")->check(integer_at_least(*seq, 1));
  s->callback([config_path, overrides, seq] { run_summary(*config_path, *overrides, *seq); });

  auto* schemes = cmd->add_subcommand("schemes", "the installed position schemes, one per line (registry order)");
  schemes->callback([] {
    for (const auto& name : config::position_scheme_names()) std::printf("%s\n", name.c_str());
  });
  auto check = std::make_shared<std::string>();
  auto* variants = cmd->add_subcommand(
      "variants", "position variant names (absolute, <scheme>, absolute_<scheme>), one per line");
  variants->add_option("--check", *check, "check a comma-separated list of variant names instead (exit 2 on an unknown one)");
  variants->callback([check] { run_variants(*check); });
}

}  // namespace tisa::cli
