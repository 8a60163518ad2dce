// Hugging Face model directories (SPEC §4): config.json (HF AlbertConfig keys plus our `tisa_train`
// block with the position config) + model.safetensors (+ the tokenizer file, copied through), and
// for models HF's ALBERT cannot express the remote-code files (hf_remote_code.h decides the form).
//
// Loading (directories we wrote, or HF's save_pretrained of them, or HF ALBERT checkpoints):
//  - model_type must be `albert` or `tisa_albert` (the latter needs the tisa_train block).
//  - `architectures[0]` picks the head: AlbertForPreTraining or AlbertForSequenceClassification,
//    or their TisaAlbertFor… remote-code forms (num_labels = size of id2label, or `num_labels`);
//    a model without heads (AlbertModel) is not supported.
//  - Position config: from `tisa_train.position` when present; otherwise from HF's
//    `position_embedding_type` (transformers 4.x): "absolute" (or absent) → {absolute},
//    "relative_key" → {shaw, k = P − 1, values: false, per_attention_module}: one table per
//    attention module (group G, inner layer I → albert.encoder.shaw.<G·inner_group_num + I>),
//    each converted exactly (SPEC §2): HF row (P−1)+(i−j) → our row (P−1)+(j−i), multiplied by √d
//    (HF ALBERT adds q·E unscaled, we scale by 1/√d). HF's unused absolute table of a relative_key
//    model is dropped. "relative_key_query" (adds k_j·E[i−j] as well) cannot be represented by our
//    schemes and is rejected, as is any other type.
//  - Strict: every parameter of the model must be present with the right shape; unknown tensors
//    are errors naming them (no parameter is ever left at its random initialisation). Ignored:
//    predictions.decoder.* (tied copies) and *position_ids.
// Saving writes our names (no predictions.decoder.*, like HF): a plain `albert` directory when HF's
// ALBERT computes the model (absolute positions only), otherwise a `tisa_albert` remote-code
// directory (relative_key imports included: transformers 5 no longer has relative_key).
#pragma once
#include <torch/nn/module.h>

#include <string>
#include <vector>

#include "config/config.h"
#include "model/albert.h"
#include "model/tensor_io.h"

namespace tisa::model {

inline constexpr const char* kPretrainingArchitecture = "AlbertForPreTraining";
inline constexpr const char* kClassificationArchitecture = "AlbertForSequenceClassification";

struct HfConfig {
  config::ModelConfig model;
  std::string architecture;  // kPretrainingArchitecture or kClassificationArchitecture
  int64_t num_labels = 2;
  std::string hf_position_type;  // position_embedding_type as found ("absolute", "relative_key", ...)
};

// Parses dir/config.json; errors name the file and key.
HfConfig read_hf_config(const std::string& dir);
// config.json text for a model (HF keys + tisa_train block).
std::string hf_config_json(const config::ModelConfig& model, const std::string& architecture, int64_t num_labels);

// A loaded model of either architecture (exactly one of the two is set).
struct LoadedModel {
  HfConfig config;
  AlbertForPreTraining pretraining{nullptr};
  AlbertForSequenceClassification classification{nullptr};
  torch::nn::Module& module();
  AlbertModel& albert();
};
LoadedModel load_hf_model(const std::string& dir, const torch::Device& device = torch::kCPU);
// What load_for_classification does with a folder that holds no classifier head (a pretraining
// checkpoint): create a fresh one, which only fine-tuning may do because it trains it, or refuse
// (eval and predict would report the metrics of random weights).
enum class MissingHead { kCreate, kRefuse };
// Loads a directory as a classification model with `num_labels` labels: from a classification
// checkpoint (labels must agree) or, with MissingHead::kCreate, from a pretraining checkpoint
// (heads dropped, a fresh classifier initialised N(0, initializer_range)).
AlbertForSequenceClassification load_for_classification(const std::string& dir, int64_t num_labels,
                                                        MissingHead missing_head, HfConfig* config_out = nullptr);

// Saves config.json + model.safetensors (atomic), and copies tokenizer files found in
// `tokenizer_dir` (spiece.model, vocab.txt, tokenizer.json, …) when it is not empty.
void save_hf_model(const std::string& dir, torch::nn::Module& model, const config::ModelConfig& config,
                   const std::string& architecture, int64_t num_labels = 2, const std::string& tokenizer_dir = "");
// Copies the tokenizer files present in src_dir into dst_dir; returns the names copied.
std::vector<std::string> copy_tokenizer_files(const std::string& src_dir, const std::string& dst_dir);

// Parameter names (HF form, our naming), in module order.
std::vector<std::string> parameter_names(const torch::nn::Module& model);
// All parameters by name (views sharing storage with the model).
TensorMap state_dict(const torch::nn::Module& model);
// Copies `tensors` into the model's parameters: every parameter must be present with its shape;
// unknown names are errors. `source` names the origin in messages.
void load_state_dict(torch::nn::Module& model, const TensorMap& tensors, const std::string& source);

// Tensors of a checkpoint file (HF names) → our parameter names, per the conversion rules above.
TensorMap from_hf_tensors(const TensorMap& hf, const HfConfig& config, const std::string& source);

}  // namespace tisa::model
