// The model side of GLUE fine-tuning, in one small interface so that the fine-tuning loop,
// `eval` and `predict` share it: an ALBERT sequence classifier (regression when num_labels = 1,
// SPEC §3) loaded from a Hugging Face-format folder — our pretraining output, an HF ALBERT folder,
// or a folder we fine-tuned earlier — and saved back with the task recorded in config.json
// (finetuning_task, num_labels, id2label, label2id, as HF writes them) and the tokenizer files
// copied alongside.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "data/glue_dataset.h"
#include "glue/glue_batches.h"
#include "glue/glue_tasks.h"

namespace tisa::glue {

// Task recorded in a model folder's config.json by a fine-tuning ("" when none).
std::string recorded_task(const std::string& model_dir);

// Tokenizer of a model folder, as a path for `tisa-text prepare glue --tokenizer`: the folder
// itself when it holds tisa_tokenizer.json, else spiece.model, another *.model, or vocab.txt.
// Throws tisa::Error naming the folder when none is there.
std::string find_tokenizer(const std::string& model_dir);
// Lowercasing recorded by an HF tokenizer_config.json ("do_lower_case"): "true", "false" or "".
std::string recorded_lowercase(const std::string& model_dir);

// Whether a folder without a classifier head (a pretraining checkpoint) may get a new, random one:
// only fine-tuning, which trains it; eval and predict need a trained head.
enum class ClassifierHead { kMustBeTrained, kCreateIfMissing };

class GlueModel {
 public:
  // Loads the encoder from `model_dir`; the classifier head is loaded when the folder holds one of
  // the right size (a fine-tuned model); a folder without one is refused (kMustBeTrained) or gets
  // a freshly initialised head (kCreateIfMissing, logged). `classifier_dropout` < 0 keeps the
  // folder's value.
  GlueModel(const std::string& model_dir, const GlueTaskInfo& task, double classifier_dropout, c10::Device device,
            ClassifierHead head = ClassifierHead::kMustBeTrained);
  ~GlueModel();
  GlueModel(const GlueModel&) = delete;
  GlueModel& operator=(const GlueModel&) = delete;

  // Logits [B, num_labels] (regression: [B, 1]).
  at::Tensor forward(const GlueBatch& batch);
  // Loss of a labelled batch from forward()'s logits: cross-entropy, or MSE for regression.
  at::Tensor loss(const at::Tensor& logits, const GlueBatch& batch) const;
  // The same loss summed over the batch's examples, not averaged: the update step divides by the
  // examples of the whole update (train/update_step.h).
  at::Tensor loss_sum(const at::Tensor& logits, const GlueBatch& batch) const;
  std::vector<std::pair<std::string, at::Tensor>> named_parameters();
  void train(bool on);
  int64_t pad_token_id() const;
  int64_t vocab_size() const;
  int64_t max_positions() const;  // longest input the model accepts

  // HF folder: config.json (+ finetuning_task, num_labels, id2label, label2id and
  // "tisa_train_glue": {"max_length"}) and model.safetensors, plus the tokenizer files of
  // `tokenizer_dir` (spiece.model / *.model / vocab.txt / tisa_tokenizer.json /
  // tokenizer_config.json / special_tokens_map.json).
  void save(const std::string& dir, const std::string& tokenizer_dir, int64_t max_length) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  GlueTaskInfo task_;
};

// Throws tisa::Error naming both folders when the data prepared in `prepared_dir` cannot run
// through `model` (loaded from `model_dir`): tokenised with a larger vocabulary than the model's
// (ids past its embedding table) or to a max_length beyond its positions.
void check_data_fits_model(const GlueModel& model, const std::string& model_dir, const std::string& prepared_dir);
// Throws tisa::Error naming the split when one of its examples holds a token id outside the
// model's vocabulary, a token type other than 0/1 or more tokens than the model has positions
// (a damaged or foreign prepared file): one sentence instead of an index error in the model.
void check_split_fits_model(const GlueModel& model, const data::GlueEncodedSplit& split);

}  // namespace tisa::glue
