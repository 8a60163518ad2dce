// Length extrapolation (beyond the paper; used by scripts/reproduce_paper.sh): the MLM / SOP loss
// and accuracy of a pretrained model on examples of several sequence lengths — typically 1×, 2×
// and 4× the pretraining length — built from the same pretraining dataset split (SPEC §5 example
// rules with max_seq_length = the evaluated length).
//
// Fairness between lengths and models:
//   - short_seq_prob is 0, so every chunk aims at the full length (documents' last chunks may
//     still be shorter); the masking budget is round(masked_lm_prob · length) with no further
//     cap (max_predictions_per_seq = ceil(masked_lm_prob · length)), so the masking rate is the
//     same at every length;
//   - examples come from epoch 0 of the split with a fixed seed, so two models evaluated with the
//     same options see exactly the same tokens and masks at each length.
// A model with an absolute position table of P rows cannot take inputs longer than P: such a
// length is reported as not available ("n/a: absolute table has P rows") and nothing is run.
// Relative schemes (shaw: clipped offsets; tisa: f_h(j − i) defined for any offset) and `none`
// accept any length.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/config.h"
#include "train/pretrain_step.h"

namespace tisa::data {
class PretrainDataset;
}

namespace tisa::train {

struct LengthEvalOptions {
  std::vector<int64_t> seq_lengths;  // e.g. {128, 256, 512}
  std::string split = "valid";       // dataset split to read ("valid" or "train")
  int64_t batch_size = 16;
  int64_t max_batches = 0;           // per length; 0 = the whole split
  double masked_lm_prob = 0.15;
  int64_t max_ngram = 3;
  uint64_t seed = 12345;             // example/masking seed (same for every model)
  config::Precision precision = config::Precision::kFp32;
};

struct LengthEvalRow {
  int64_t seq_length = 0;
  bool available = true;   // false: the model cannot take this length (see `reason`)
  std::string reason;      // e.g. "n/a: absolute table has 128 rows"
  EvalResult result;       // valid when available
  int64_t tokens = 0;      // non-padding tokens evaluated
  double seconds = 0;
};

// Why `model` cannot process `seq_length` tokens, or "" when it can.
std::string length_unavailable_reason(const config::ModelConfig& model, int64_t seq_length);

// Evaluates `model` (already on `device`) at every length of `options` on `dataset`. Throws
// tisa::Error when the split is empty, a length is < 8, or the dataset's vocabulary does not fit
// the model. Restores the model's training mode.
std::vector<LengthEvalRow> evaluate_lengths(model::AlbertForPreTraining& model, const config::ModelConfig& model_cfg,
                                            std::shared_ptr<const data::PretrainDataset> dataset,
                                            const LengthEvalOptions& options, const torch::Device& device);

// {"seq_length", "available", "reason"?, "mlm_loss", "mlm_accuracy", "sop_loss", "sop_accuracy",
//  "examples", "predictions", "tokens", "seconds"} per row.
nlohmann::json length_rows_to_json(const std::vector<LengthEvalRow>& rows);

// A fixed-width table (one line per length) for the console.
std::string format_length_table(const std::vector<LengthEvalRow>& rows);

}  // namespace tisa::train
