// Length extrapolation evaluation; see length_eval.h.
#include "train/length_eval.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "common/error.h"
#include "data/pretrain_dataset.h"
#include "data/pretrain_examples.h"
#include "data/pretrain_loader.h"

namespace tisa::train {

std::string length_unavailable_reason(const config::ModelConfig& model, int64_t seq_length) {
  if (model.position.absolute && seq_length > model.max_position_embeddings)
    return "n/a: absolute table has " + std::to_string(model.max_position_embeddings) + " rows";
  return "";
}

namespace {

data::ExampleOptions examples_for_length(const LengthEvalOptions& o, int64_t seq_length) {
  data::ExampleOptions e;
  e.max_seq_length = seq_length;
  // Budget round(p · length) with no extra cap: the same masking rate at every length.
  e.max_predictions_per_seq = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(o.masked_lm_prob * seq_length)));
  e.masked_lm_prob = o.masked_lm_prob;
  e.short_seq_prob = 0.0;  // every chunk aims at the full length
  e.max_ngram = o.max_ngram;
  e.static_masking = false;
  e.seed = o.seed;
  return e;
}

}  // namespace

std::vector<LengthEvalRow> evaluate_lengths(model::AlbertForPreTraining& model, const config::ModelConfig& model_cfg,
                                            std::shared_ptr<const data::PretrainDataset> dataset,
                                            const LengthEvalOptions& options, const torch::Device& device) {
  if (options.seq_lengths.empty()) throw Error("length evaluation: no sequence lengths given");
  if (options.split != "valid" && options.split != "train")
    throw Error("length evaluation: split must be 'valid' or 'train', got '" + options.split + "'");
  if (options.batch_size < 1) throw Error("length evaluation: batch size must be >= 1");
  const auto& split = dataset->split(options.split);
  if (split.num_documents() == 0)
    throw Error(dataset->dir() + ": the " + options.split +
                " split is empty (hint: prepare the dataset with --valid-fraction > 0, or use --split train)");
  const int64_t vocab = dataset->header().tokenizer.vocab_size;
  if (vocab > model_cfg.vocab_size)
    throw Error(dataset->dir() + " was tokenised with " + std::to_string(vocab) + " ids but the model has vocab_size " +
                std::to_string(model_cfg.vocab_size) + " (evaluate on a dataset made with the model's tokenizer)");

  std::vector<LengthEvalRow> rows;
  for (int64_t length : options.seq_lengths) {
    if (length < 8) throw Error("length evaluation: sequence length " + std::to_string(length) + " is below 8");
    LengthEvalRow row;
    row.seq_length = length;
    row.reason = length_unavailable_reason(model_cfg, length);
    if (!row.reason.empty()) {
      row.available = false;
      spdlog::info("[eval] length {}: {}", length, row.reason);
      rows.push_back(row);
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    auto builder = std::make_shared<const data::ExampleBuilder>(dataset, options.split, examples_for_length(options, length));
    data::LoaderOptions lo;
    lo.batch_size = options.batch_size;
    lo.workers = 0;
    lo.loop = false;
    data::PretrainBatchLoader loader(builder, lo, data::DataPosition{});
    // Count the tokens of the batches evaluate() will read (same positions, built again cheaply
    // by a second loader so that evaluate() stays the trainer's own evaluation pass).
    data::PretrainBatchLoader counter(builder, lo, data::DataPosition{});
    data::PretrainBatch b;
    for (int64_t n = 0; (options.max_batches <= 0 || n < options.max_batches) && counter.next(b); ++n)
      row.tokens += b.num_tokens;
    row.result = evaluate(model, loader, options.max_batches, device, options.precision);
    row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (row.result.examples == 0)
      throw Error(dataset->dir() + ": no examples of length " + std::to_string(length) + " in the " + options.split +
                  " split");
    spdlog::info("[eval] length {}: mlm_loss {:.4f} mlm_acc {:.4f} sop_acc {:.4f} ({} examples, {} tokens, {:.1f} s)",
                 length, row.result.mlm_loss, row.result.mlm_accuracy, row.result.sop_accuracy, row.result.examples,
                 row.tokens, row.seconds);
    rows.push_back(row);
  }
  return rows;
}

nlohmann::json length_rows_to_json(const std::vector<LengthEvalRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json j = {{"seq_length", r.seq_length}, {"available", r.available}};
    if (!r.available) {
      j["reason"] = r.reason;
    } else {
      j["mlm_loss"] = r.result.mlm_loss;
      j["mlm_accuracy"] = r.result.mlm_accuracy;
      j["sop_loss"] = r.result.sop_loss;
      j["sop_accuracy"] = r.result.sop_accuracy;
      j["examples"] = r.result.examples;
      j["predictions"] = r.result.predictions;
      j["tokens"] = r.tokens;
      j["seconds"] = r.seconds;
    }
    out.push_back(j);
  }
  return out;
}

std::string format_length_table(const std::vector<LengthEvalRow>& rows) {
  std::string out = "  length  mlm_loss  mlm_acc  sop_loss  sop_acc  examples  predictions\n";
  char line[256];
  for (const auto& r : rows) {
    if (!r.available) {
      std::snprintf(line, sizeof line, "  %6lld  %s\n", static_cast<long long>(r.seq_length), r.reason.c_str());
    } else {
      std::snprintf(line, sizeof line, "  %6lld  %8.4f  %7.4f  %8.4f  %7.4f  %8lld  %11lld\n",
                    static_cast<long long>(r.seq_length), r.result.mlm_loss, r.result.mlm_accuracy, r.result.sop_loss,
                    r.result.sop_accuracy, static_cast<long long>(r.result.examples),
                    static_cast<long long>(r.result.predictions));
    }
    out += line;
  }
  return out;
}

}  // namespace tisa::train
