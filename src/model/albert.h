// ALBERT in LibTorch, weight-compatible with Hugging Face transformers 4.30 (SPEC §3), with the
// position schemes of SPEC §2 (absolute embedding table; every other scheme through the hooks of
// position/relative_scheme.h, built by position/registry.cpp).
//
// Module tree and parameter names follow HF exactly, e.g.
//   albert.embeddings.{word_embeddings,position_embeddings,token_type_embeddings}.weight
//   albert.encoder.embedding_hidden_mapping_in.{weight,bias}
//   albert.encoder.albert_layer_groups.G.albert_layers.I.attention.{query,key,value,dense,LayerNorm}.*
//   albert.encoder.albert_layer_groups.G.albert_layers.I.{ffn,ffn_output,full_layer_layer_norm}.*
//   albert.pooler.{weight,bias}
//   predictions.{dense,LayerNorm}.*, predictions.bias   (decoder tied to the word embeddings)
//   sop_classifier.classifier.*  |  classifier.*
// plus our scheme parameters albert.encoder.<scheme>.<index>.* (index = attention-layer
// application, attention module or 0, following position.sharing). Without `position.absolute` there is no position table.
//
// Everything runs on the device of the parameters (model->to(device)); inputs are moved there.
#pragma once
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include <string>
#include <vector>

#include "config/config.h"
#include "model/fused_attention.h"
#include "model/position/absolute.h"
#include "model/position/relative_scheme.h"

namespace tisa::model {

// What a forward returns besides the main outputs (off by default: they cost memory).
struct ForwardOptions {
  bool hidden_states = false;  // embedding_output and the hidden state after each layer
  bool attentions = false;     // softmax probabilities of each layer [B, H, L, L]
  // [B] int64 or undefined: sequence b reads the learned position table at rows offsets[b] …
  // offsets[b]+L−1 instead of 0 … L−1 (pretraining's training.position_span).
  torch::Tensor position_offsets;
  // AlbertModel: [R] int64 flat positions b·L + t, or undefined. When defined the final layer runs
  // the rest of it past its attention (output projection, residual, LayerNorms, FFN) only at these
  // rows and at each sequence's first (the pooler's), as MosaicBERT's sparse final layer: no other
  // final state feeds a head; on the CPU attention kernel its attention, too, computes only these
  // query rows (over every key; other attention paths compute every query). last_hidden_state is
  // then left undefined and final_rows_hidden holds the rows. Exact: those parts of a layer act on
  // each position alone (with hidden dropout its masks are drawn for these rows only, so a run's
  // draws differ).
  torch::Tensor final_rows;
  // The heads: the caller reads only the head's outputs (logits, pooler_output), so the heads set
  // final_rows to the positions they read (the masked positions; none besides the first).
  bool head_outputs_only = false;
};

struct EncoderOutput {
  torch::Tensor last_hidden_state;           // [B, L, H]
  torch::Tensor pooler_output;               // [B, H] = tanh(W h[:, 0] + b)
  torch::Tensor embedding_output;            // [B, L, E] (with hidden_states)
  std::vector<torch::Tensor> hidden_states;  // L+1 tensors [B, L, H] (with hidden_states)
  std::vector<torch::Tensor> attentions;     // one [B, H, L, L] per layer (with attentions)
  torch::Tensor final_rows_hidden;           // [R, H] at ForwardOptions::final_rows (with final_rows)
};

// ---------------------------------------------------------------------------------- embeddings
struct AlbertEmbeddingsImpl : torch::nn::Module {
  explicit AlbertEmbeddingsImpl(const config::ModelConfig& c);
  // [B, L] ids → [B, L, E] after LayerNorm and dropout; `scheme` (may be null) adds its
  // embedding-side term before the LayerNorm (add_to_embeddings); `position_offsets` as in
  // ForwardOptions.
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                        RelativeSchemeImpl* scheme = nullptr, const torch::Tensor& position_offsets = {});
  torch::nn::Embedding word_embeddings{nullptr};
  AbsolutePositions position_embeddings{nullptr};  // absent without position.absolute
  torch::nn::Embedding token_type_embeddings{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};
  torch::nn::Dropout dropout{nullptr};
  int64_t pad_token_id;
};
TORCH_MODULE(AlbertEmbeddings);

// ---------------------------------------------------------------------------------- attention
// Multi-head self-attention, post-LN: LN(x + dense(MHA(x))). The one attention implementation;
// position schemes hook in through RelativeSchemeImpl (may be null).
struct AlbertAttentionImpl : torch::nn::Module {
  explicit AlbertAttentionImpl(const config::ModelConfig& c);
  // x [B, L, H]; additive_mask [B, 1, 1, L] (0 or a large negative); probs_out receives the
  // attention probabilities when not null (which takes the eager path: SDPA does not return them).
  // rows ([R] int64 flat positions b·L + t, or undefined): return only these rows' output [R, H]
  // (the output projection, residual and LayerNorm run only there; on the CPU attention kernel
  // only these rows query, over every key).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& additive_mask, RelativeSchemeImpl* scheme,
                        torch::Tensor* probs_out = nullptr, const torch::Tensor& rows = {});
  // Whether this call can take the fused path (model/fused_attention.h).
  bool uses_fused(const RelativeSchemeImpl* scheme, bool probs_requested) const;
  // Whether this call takes the CPU kernel (model/cpu_attention.h) for projections q.
  bool uses_cpu_kernel(const RelativeSchemeImpl* scheme, bool probs_requested, const torch::Tensor& q) const;
  torch::nn::Linear query{nullptr}, key{nullptr}, value{nullptr}, dense{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};
  torch::nn::Dropout attention_dropout{nullptr}, output_dropout{nullptr};
  int64_t num_heads, head_size;
  AttentionBackend backend = AttentionBackend::kAuto;
};
TORCH_MODULE(AlbertAttention);

struct AlbertLayerImpl : torch::nn::Module {
  explicit AlbertLayerImpl(const config::ModelConfig& c);
  // x [B, L, H] → [B, L, H], or [R, H] at `rows` (as AlbertAttentionImpl::forward).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& additive_mask, RelativeSchemeImpl* scheme,
                        torch::Tensor* probs_out = nullptr, const torch::Tensor& rows = {});
  AlbertAttention attention{nullptr};
  torch::nn::Linear ffn{nullptr}, ffn_output{nullptr};
  torch::nn::LayerNorm full_layer_layer_norm{nullptr};
  torch::nn::Dropout dropout{nullptr};
  config::HiddenAct activation;
};
TORCH_MODULE(AlbertLayer);

struct AlbertLayerGroupImpl : torch::nn::Module {
  explicit AlbertLayerGroupImpl(const config::ModelConfig& c);
  std::vector<AlbertLayer> layers;  // registered as albert_layers.<i>
  torch::nn::ModuleList albert_layers;
};
TORCH_MODULE(AlbertLayerGroup);

// Embedding projection E→H, num_hidden_layers applications of the shared groups (layer i uses
// group int(i / (L / groups))), and the relative scheme modules.
struct AlbertTransformerImpl : torch::nn::Module {
  explicit AlbertTransformerImpl(const config::ModelConfig& c);
  // embeddings [B, L, E] → the final hidden state [B, L, H], or [R, H] at `final_rows` (defined):
  // the last layer application computes only those rows after its attention.
  torch::Tensor forward(const torch::Tensor& embeddings, const torch::Tensor& additive_mask,
                        const ForwardOptions& options, EncoderOutput* out, const torch::Tensor& final_rows = {});
  // The scheme module used by layer application `layer`, inner layer `inner` (null for none).
  RelativeSchemeImpl* scheme_for(int64_t layer, int64_t inner) const;
  torch::nn::Linear embedding_hidden_mapping_in{nullptr};
  std::vector<AlbertLayerGroup> groups;
  torch::nn::ModuleList albert_layer_groups;
  std::vector<std::shared_ptr<RelativeSchemeImpl>> schemes;  // registered as <scheme name>.<i>
  bool schemes_per_attention_module = false;  // schemes[group · inner_group_num + inner], else [layer · … + inner]
  int64_t num_hidden_layers, num_hidden_groups, inner_group_num;
};
TORCH_MODULE(AlbertTransformer);

// ---------------------------------------------------------------------------------- AlbertModel
struct AlbertModelImpl : torch::nn::Module {
  explicit AlbertModelImpl(const config::ModelConfig& c);
  // input_ids, token_type_ids, attention_mask: [B, L] int64 (token_type_ids / attention_mask
  // may be undefined: zeros / ones).
  EncoderOutput forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                        const torch::Tensor& attention_mask, const ForwardOptions& options = {});
  AlbertEmbeddings embeddings{nullptr};
  AlbertTransformer encoder{nullptr};
  torch::nn::Linear pooler{nullptr};
  config::ModelConfig config;
};
TORCH_MODULE(AlbertModel);

// ---------------------------------------------------------------------------------- heads
// MLM head: dense H→E, activation, LayerNorm(E), decoder tied to the word embeddings + bias.
struct AlbertMLMHeadImpl : torch::nn::Module {
  AlbertMLMHeadImpl(const config::ModelConfig& c, torch::Tensor word_embeddings);
  // hidden [..., H] → logits [..., V].
  torch::Tensor forward(const torch::Tensor& hidden);
  torch::nn::Linear dense{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};
  torch::Tensor bias;             // [V]
  torch::Tensor decoder_weight;   // = albert.embeddings.word_embeddings.weight (not registered)
  config::HiddenAct activation;
};
TORCH_MODULE(AlbertMLMHead);

struct AlbertSOPHeadImpl : torch::nn::Module {
  explicit AlbertSOPHeadImpl(const config::ModelConfig& c);
  torch::Tensor forward(const torch::Tensor& pooled);  // [B, H] → [B, 2]
  torch::nn::Dropout dropout{nullptr};
  torch::nn::Linear classifier{nullptr};
};
TORCH_MODULE(AlbertSOPHead);

struct PretrainingOutput {
  EncoderOutput encoder;
  // With masked positions: [M, V] at those positions; without: [B, L, V] at every position.
  torch::Tensor prediction_logits;
  torch::Tensor sop_logits;  // [B, 2]
};

// AlbertForPreTraining: MLM + sentence-order prediction (SPEC §3, §5).
struct AlbertForPreTrainingImpl : torch::nn::Module {
  explicit AlbertForPreTrainingImpl(const config::ModelConfig& c);
  // masked_positions: flat int64 indices into the B·L positions (row-major: b·L + t). When given,
  // the vocabulary projection runs only there (pretraining must never project every position).
  PretrainingOutput forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                            const torch::Tensor& attention_mask, const torch::Tensor& masked_positions = {},
                            const ForwardOptions& options = {});
  AlbertModel albert{nullptr};
  AlbertMLMHead predictions{nullptr};
  AlbertSOPHead sop_classifier{nullptr};
};
TORCH_MODULE(AlbertForPreTraining);

struct ClassificationOutput {
  EncoderOutput encoder;
  torch::Tensor logits;  // [B, num_labels]
};

// AlbertForSequenceClassification: dropout + Linear(H, num_labels) on the pooled output;
// num_labels == 1 is regression (MSE).
struct AlbertForSequenceClassificationImpl : torch::nn::Module {
  AlbertForSequenceClassificationImpl(const config::ModelConfig& c, int64_t num_labels);
  ClassificationOutput forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                               const torch::Tensor& attention_mask, const ForwardOptions& options = {});
  AlbertModel albert{nullptr};
  torch::nn::Dropout dropout{nullptr};
  torch::nn::Linear classifier{nullptr};
  int64_t num_labels;
};
TORCH_MODULE(AlbertForSequenceClassification);

// ---------------------------------------------------------------------------------- losses
// MLM labels in HF form [B, L] (−100 = not predicted) → flat positions [M] and labels [M].
struct MaskedTargets {
  torch::Tensor positions;  // int64 [M], b·L + t
  torch::Tensor labels;     // int64 [M]
};
MaskedTargets masked_targets_from_labels(const torch::Tensor& labels);
// Mean cross-entropy over targets (labels −100 ignored). logits [M, V] or [B, L, V].
torch::Tensor mlm_loss(const torch::Tensor& logits, const torch::Tensor& labels);
// Cross-entropy of the sentence-order head; logits [B, 2], labels [B].
torch::Tensor sop_loss(const torch::Tensor& logits, const torch::Tensor& labels);
// Sequence head loss: MSE when num_labels == 1 (labels float [B]), else cross-entropy (int64 [B]).
torch::Tensor classification_loss(const torch::Tensor& logits, const torch::Tensor& labels);

// model.hidden_act: gelu_new / gelu_pytorch_tanh (tanh approximation), gelu (exact), relu.
torch::Tensor activation(config::HiddenAct act, const torch::Tensor& x);
// Checks the parts of a ModelConfig the model relies on (sizes, the selected position scheme's
// settings); throws tisa::Error.
void check_model_config(const config::ModelConfig& c);

// Sets the attention backend of every attention layer below `model` (any of the modules above).
void set_attention_backend(torch::nn::Module& model, AttentionBackend backend);

// Positional parameters as counted in the paper's table: absolute table + scheme parameters.
int64_t positional_parameter_count(const config::ModelConfig& c);

}  // namespace tisa::model
