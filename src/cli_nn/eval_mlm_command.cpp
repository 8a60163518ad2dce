// `tisa-train eval-mlm`: MLM / SOP loss and accuracy of a pretrained model at several sequence
// lengths (length extrapolation, src/train/length_eval.h), e.g.
//   tisa-train eval-mlm --model runs/tisa/final --dataset data/datasets/small --seq-lengths 128,256,512
// Lengths an absolute position table cannot hold are reported as "n/a: absolute table has P rows".
// Masking: by default the model's own pretraining settings (data.masked_lm_prob, data.max_ngram,
// recorded in its tisa_identity.json), so that the 1× column repeats the run's validation figure;
// --masked-lm-prob / --max-ngram change them; a folder without the record uses SPEC §5's 0.15 and
// 3, saying so. --output writes {"model", "dataset", "split", "masked_lm_prob", "max_ngram",
// "masking_from", "position", "positional_parameters", "lengths": [...]}.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <sstream>

#include "cli_nn/commands.h"
#include "common/cli_checks.h"
#include "common/error.h"
#include "common/output_guard.h"
#include "common/fs.h"
#include "config/config_loader.h"
#include "data/model_identity.h"
#include "data/pretrain_dataset.h"
#include "model/albert.h"
#include "model/hf_checkpoint.h"
#include "train/length_eval.h"
#include "train/precision_choice.h"

namespace tisa::cli {
namespace {

struct EvalMlmArgs {
  std::string model_dir, dataset_dir, lengths, output, device = "cpu";
  train::LengthEvalOptions options;
  int64_t seed = 12345;
  int64_t threads = 0;
  double masked_lm_prob = -1;  // < 0: not given (the model's record decides)
  int64_t max_ngram = -1;
  bool bf16 = false;
};

std::vector<int64_t> parse_lengths(const std::string& text) {
  std::vector<int64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    try {
      size_t used = 0;
      const long long v = std::stoll(item, &used);
      if (used != item.size() || v < 1) throw std::invalid_argument(item);
      out.push_back(v);
    } catch (const std::exception&) {
      throw Error("--seq-lengths: '" + item + "' is not a positive integer (expected e.g. --seq-lengths 128,256,512)");
    }
  }
  if (out.empty()) throw Error("--seq-lengths: no length given (expected e.g. --seq-lengths 128,256,512)");
  return out;
}

// Sets the masking options: the flags, else the model's pretraining record, else SPEC §5's
// defaults. Returns where they came from ("flags", "model", "defaults"; "model+flags" when mixed).
std::string choose_masking(EvalMlmArgs& a, const std::optional<data::ModelIdentity>& identity) {
  const auto& record = identity ? identity->masking : std::nullopt;
  const bool prob_given = a.masked_lm_prob >= 0, ngram_given = a.max_ngram >= 0;
  const data::MaskingRecord fallback;
  a.options.masked_lm_prob = prob_given ? a.masked_lm_prob : (record ? record->masked_lm_prob : fallback.masked_lm_prob);
  a.options.max_ngram = ngram_given ? a.max_ngram : (record ? record->max_ngram : fallback.max_ngram);
  std::string from = prob_given && ngram_given ? "flags" : record ? "model" : "defaults";
  if ((prob_given || ngram_given) && from != "flags") from += "+flags";
  if (!record && !(prob_given && ngram_given))
    spdlog::warn("[eval-mlm] {} records no pretraining masking: using masked_lm_prob {} and max_ngram {} (set "
                 "--masked-lm-prob and --max-ngram to the run's data.masked_lm_prob and data.max_ngram)",
                 a.model_dir, a.options.masked_lm_prob, a.options.max_ngram);
  spdlog::info("[eval-mlm] masking: masked_lm_prob {}, n-grams up to {} (from {})", a.options.masked_lm_prob,
               a.options.max_ngram, from);
  return from;
}

void run_eval_mlm(EvalMlmArgs& a) {
  a.options.seq_lengths = parse_lengths(a.lengths);
  a.options.seed = static_cast<uint64_t>(a.seed);
  if (a.threads > 0) torch::set_num_threads(static_cast<int>(a.threads));
  const torch::Device device(a.device);
  a.options.precision =
      train::choose_precision(a.bf16 ? config::Precision::kBf16 : config::Precision::kFp32, device, "[eval-mlm]");
  if (device.is_cuda() && !torch::cuda::is_available()) throw Error("--device cuda: CUDA is not available");
  check_output_is_not_input("--output", a.output, model_folder_inputs(a.model_dir));
  auto loaded = model::load_hf_model(a.model_dir, device);
  if (!loaded.pretraining)
    throw Error(a.model_dir + " is a " + loaded.config.architecture +
                " checkpoint; eval-mlm needs a pretraining model (AlbertForPreTraining, e.g. <run>/final)");
  auto dataset = std::make_shared<const data::PretrainDataset>(a.dataset_dir);
  const auto identity = data::verified_model_identity(a.model_dir);
  data::check_same_tokenizer(identity, a.model_dir,
                             dataset->header().tokenizer.identity, dataset->header().tokenizer_files,
                             "the dataset " + a.dataset_dir);
  const std::string masking_from = choose_masking(a, identity);
  const auto& cfg = loaded.config.model;
  auto rows = train::evaluate_lengths(loaded.pretraining, cfg, dataset, a.options, device);
  std::printf("%s (%s split of %s)\n%s", a.model_dir.c_str(), a.options.split.c_str(), a.dataset_dir.c_str(),
              train::format_length_table(rows).c_str());
  std::fflush(stdout);
  if (!a.output.empty()) {
    nlohmann::json out = {{"model", a.model_dir},
                          {"dataset", a.dataset_dir},
                          {"split", a.options.split},
                          {"seed", a.seed},
                          {"masked_lm_prob", a.options.masked_lm_prob},
                          {"max_ngram", a.options.max_ngram},
                          {"masking_from", masking_from},
                          {"position", config::model_config_to_json(cfg)["position"]},
                          {"max_position_embeddings", cfg.max_position_embeddings},
                          {"positional_parameters", model::positional_parameter_count(cfg)},
                          {"lengths", train::length_rows_to_json(rows)}};
    fs::write_file_atomic(a.output, out.dump(2) + "\n");
    spdlog::info("[eval] wrote {}", a.output);
  }
}

}  // namespace

void add_eval_mlm_command(CLI::App& app) {
  auto a = std::make_shared<EvalMlmArgs>();
  auto* cmd = app.add_subcommand("eval-mlm", "MLM/SOP loss and accuracy of a pretrained model at several sequence lengths");
  cmd->add_option("--model", a->model_dir, "pretrained model folder (config.json + model.safetensors, e.g. <run>/final)")
      ->required();
  cmd->add_option("--dataset", a->dataset_dir, "pretraining dataset folder (from `tisa-train prepare pretrain`)")
      ->required();
  cmd->add_option("--seq-lengths", a->lengths, "comma-separated lengths, e.g. 128,256,512 (1x, 2x, 4x training)")
      ->required();
  cmd->add_option("--split", a->options.split, "dataset split: valid or train")->check(CLI::IsMember({"valid", "train"}));
  cmd->add_option("--batch-size", a->options.batch_size, "examples per batch")
      ->check(integer_at_least(a->options.batch_size, 1));
  cmd->add_option("--max-batches", a->options.max_batches, "batches per length (0 = the whole split)")
      ->check(integer_at_least(a->options.max_batches, 0));
  cmd->add_option("--masked-lm-prob", a->masked_lm_prob,
                  "share of tokens masked at every length (default: the model's pretraining data.masked_lm_prob)")
      ->check(CLI::Range(0.001, 0.999));
  cmd->add_option("--max-ngram", a->max_ngram,
                  "longest masked n-gram of whole words (default: the model's pretraining data.max_ngram)")
      ->check(integer_at_least(a->max_ngram, 1));
  cmd->add_option("--seed", a->seed, "seed of the examples and masks (same for every model)")
      ->check(integer_at_least(a->seed, 0));
  cmd->add_option("--device", a->device, "cpu or cuda")->check(device_name());
  cmd->add_flag("--bf16", a->bf16, "bf16 autocast");
  cmd->add_option("--threads", a->threads, "intra-op threads (0 = LibTorch default)")
      ->check(integer_between(a->threads, 0, 1024));
  cmd->add_option("--output", a->output, "JSON file to write (also printed as a table)");
  cmd->callback([a] { run_eval_mlm(*a); });
}

}  // namespace tisa::cli
