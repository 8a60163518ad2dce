// ALBERT modules, heads and losses; see albert.h (SPEC §2, §3).
#include "model/albert.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/error.h"
#include "model/autocast.h"
#include "model/cpu_attention.h"
#include "model/cpu_linear.h"
#include "model/position/registry.h"

namespace tisa::model {
namespace {

// HF _init_weights: Linear N(0, range) with zero bias, LayerNorm (1, 0).
torch::nn::Linear make_linear(int64_t in, int64_t out, double std) {
  torch::nn::Linear l(torch::nn::LinearOptions(in, out));
  torch::NoGradGuard guard;
  l->weight.normal_(0.0, std);
  l->bias.zero_();
  return l;
}

// l(x) over x's last dimension as one 2-D product (model::linear).
torch::Tensor linear_rows(torch::nn::Linear& l, const torch::Tensor& x) { return model::linear(x, l->weight, l->bias); }

torch::nn::LayerNorm make_layer_norm(int64_t size, double eps) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({size}).eps(eps).elementwise_affine(true));
}

torch::nn::Embedding make_embedding(int64_t rows, int64_t dim, double std, int64_t padding_idx) {
  auto options = torch::nn::EmbeddingOptions(rows, dim);
  if (padding_idx >= 0) options.padding_idx(padding_idx);
  torch::nn::Embedding e(options);
  torch::NoGradGuard guard;
  e->weight.normal_(0.0, std);
  if (padding_idx >= 0) e->weight[padding_idx].zero_();
  return e;
}

// LayerNorm in the parameters' dtype: under bf16 autocast the residual sum arrives in bf16, and
// LibTorch 1.13's CPU layer_norm rejects a bf16 input with float32 weights.
torch::Tensor layer_norm(torch::nn::LayerNorm& ln, const torch::Tensor& x) {
  return ln(x.scalar_type() == ln->weight.scalar_type() ? x : x.to(ln->weight.scalar_type()));
}

// The sparse final layer's queries for the CPU attention kernel: the distinct asked rows (flat
// b·L + t, any order, repeats allowed) grouped by sequence into positions [B, Lq], Lq ≤ L the most
// distinct rows one sequence asks for, the shorter lists padded with position 0 (a real query
// whose result nobody reads, so it adds nothing to any gradient); and for each asked row, its slot
// b·Lq + i in that grid.
struct QueryGrid {
  torch::Tensor positions;  // int64 [B, Lq]
  torch::Tensor slots;      // int64 [R]
};
QueryGrid query_grid(const torch::Tensor& rows, int64_t B, int64_t L) {
  const auto flat = rows.to(torch::kCPU, torch::kLong).contiguous();
  const int64_t R = flat.numel();
  const int64_t* row = flat.data_ptr<int64_t>();
  std::vector<int64_t> index(static_cast<size_t>(B * L), -1);  // a row's index among its sequence's
  std::vector<int64_t> count(static_cast<size_t>(B), 0);
  for (int64_t i = 0; i < R; ++i) {
    TORCH_CHECK(row[i] >= 0 && row[i] < B * L, "final_rows: row ", row[i], " outside [0, ", B * L, ")");
    auto& at = index[static_cast<size_t>(row[i])];
    if (at < 0) at = count[static_cast<size_t>(row[i] / L)]++;
  }
  const int64_t Lq = std::max<int64_t>(1, *std::max_element(count.begin(), count.end()));
  QueryGrid grid{torch::zeros({B, Lq}, torch::kLong), torch::empty({R}, torch::kLong)};
  int64_t* position = grid.positions.data_ptr<int64_t>();
  int64_t* slot = grid.slots.data_ptr<int64_t>();
  for (int64_t i = 0; i < R; ++i) {
    slot[i] = row[i] / L * Lq + index[static_cast<size_t>(row[i])];
    position[slot[i]] = row[i] % L;
  }
  return grid;
}

// Rows [B, H, Lq, n] of t [B, H, L, n] at the grid's positions (undefined stays undefined).
torch::Tensor query_rows_of(const torch::Tensor& t, const QueryGrid& grid) {
  if (!t.defined() || !grid.positions.defined()) return t;
  const int64_t B = t.size(0), Lq = grid.positions.size(1);
  return t.gather(2, grid.positions.view({B, 1, Lq, 1}).expand({B, t.size(1), Lq, t.size(3)}));
}

}  // namespace

torch::Tensor activation(config::HiddenAct act, const torch::Tensor& x) {
  switch (act) {
    case config::HiddenAct::kGeluNew:
    case config::HiddenAct::kGeluPytorchTanh: return torch::gelu(x, "tanh");
    case config::HiddenAct::kGelu: return torch::gelu(x);
    case config::HiddenAct::kRelu: return torch::relu(x);
  }
  TORCH_CHECK(false, "hidden_act: unknown activation ", static_cast<int>(act));
}

void check_model_config(const config::ModelConfig& c) {
  auto fail = [](const std::string& m) { throw Error("model config: " + m); };
  if (c.hidden_size % c.num_attention_heads != 0)
    fail("hidden_size (" + std::to_string(c.hidden_size) + ") must be divisible by num_attention_heads (" +
         std::to_string(c.num_attention_heads) + ")");
  if (c.num_hidden_groups < 1 || c.num_hidden_layers < 1 || c.inner_group_num < 1)
    fail("num_hidden_layers, num_hidden_groups and inner_group_num must be >= 1");
  if (c.num_hidden_layers % c.num_hidden_groups != 0)
    fail("num_hidden_layers (" + std::to_string(c.num_hidden_layers) + ") must be a multiple of num_hidden_groups (" +
         std::to_string(c.num_hidden_groups) + ")");
  // The selected scheme's own checks (its settings' validate()).
  if (const config::SchemeSettings* s = c.position.find_settings(c.position.relative)) {
    std::vector<config::ConfigProblem> problems;
    config::SettingsProblems sink(s->name(), problems);
    s->validate(c, true, sink);
    for (const auto& p : problems) fail(p.key.substr(std::string("model.").size()) + ": " + p.message);
  }
}

// ---------------------------------------------------------------------------------- embeddings
AlbertEmbeddingsImpl::AlbertEmbeddingsImpl(const config::ModelConfig& c) : pad_token_id(c.pad_token_id) {
  word_embeddings = register_module(
      "word_embeddings", make_embedding(c.vocab_size, c.embedding_size, c.initializer_range, c.pad_token_id));
  if (c.position.absolute)
    position_embeddings = register_module(
        "position_embeddings", AbsolutePositions(c.max_position_embeddings, c.embedding_size, c.initializer_range));
  token_type_embeddings = register_module(
      "token_type_embeddings", make_embedding(c.type_vocab_size, c.embedding_size, c.initializer_range, -1));
  LayerNorm = register_module("LayerNorm", make_layer_norm(c.embedding_size, c.layer_norm_eps));
  dropout = register_module("dropout", torch::nn::Dropout(c.hidden_dropout_prob));
}

torch::Tensor AlbertEmbeddingsImpl::forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                                            RelativeSchemeImpl* scheme, const torch::Tensor& position_offsets) {
  auto x = word_embeddings(input_ids) + token_type_embeddings(token_type_ids);  // [B, L, E]
  if (position_embeddings)
    x = x + (position_offsets.defined() ? position_embeddings->shifted(position_offsets, input_ids.size(1))  // [B, L, E]
                                        : position_embeddings(input_ids.size(1)));                          // [L, E]
  if (scheme) x = scheme->add_to_embeddings(x);                                 // e.g. sinusoidal
  return dropout(layer_norm(LayerNorm, x));
}

// ---------------------------------------------------------------------------------- attention
AlbertAttentionImpl::AlbertAttentionImpl(const config::ModelConfig& c)
    : num_heads(c.num_attention_heads), head_size(c.hidden_size / c.num_attention_heads) {
  const double std = c.initializer_range;
  query = register_module("query", make_linear(c.hidden_size, c.hidden_size, std));
  key = register_module("key", make_linear(c.hidden_size, c.hidden_size, std));
  value = register_module("value", make_linear(c.hidden_size, c.hidden_size, std));
  attention_dropout = register_module("attention_dropout", torch::nn::Dropout(c.attention_probs_dropout_prob));
  output_dropout = register_module("output_dropout", torch::nn::Dropout(c.hidden_dropout_prob));
  dense = register_module("dense", make_linear(c.hidden_size, c.hidden_size, std));
  LayerNorm = register_module("LayerNorm", make_layer_norm(c.hidden_size, c.layer_norm_eps));
}

torch::Tensor AlbertAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& additive_mask,
                                           RelativeSchemeImpl* scheme, torch::Tensor* probs_out,
                                           const torch::Tensor& rows) {
  const int64_t B = x.size(0), L = x.size(1);
  auto split = [&](const torch::Tensor& t) { return t.view({B, L, num_heads, head_size}).transpose(1, 2); };
  // Under autocast x (the float32 LayerNorm output) is cast once for the three projections, not
  // once per projection: two fewer [B, L, H] casts forward and backward (their gradients meet in
  // the cast's dtype and reach x through one cast back).
  const auto cast_to = model::autocast_dtype(x.device());
  const auto xq = cast_to && x.scalar_type() == torch::kFloat ? x.to(*cast_to) : x;
  auto q = split(linear_rows(query, xq));  // [B, H, L, d]
  auto k = split(linear_rows(key, xq));  // [B, H, L, d]
  auto v = split(linear_rows(value, xq));  // [B, H, L, d]
  torch::Tensor context, context_rows;
  if (uses_cpu_kernel(scheme, probs_out != nullptr, q)) {
    if (scheme) scheme->transform_qk(q, k);  // RoPE
    // The mask clamped to bf16's range for both dtypes: finite with room below float's lowest, so
    // that a negative bias added to it cannot overflow to −∞.
    const auto mask = finite_mask_for(additive_mask, torch::kBFloat16);
    // A sparse final layer asks the kernel only for the query rows it reads; the scheme's terms
    // are computed for every position as usual and the kernel reads their rows by position.
    const QueryGrid grid = rows.defined() ? query_grid(rows, B, L) : QueryGrid{};
    const int64_t window = scheme ? scheme->offset_window(L) : -1;
    if (window >= 0) {  // Shaw's: the kernel adds E by offset and sums P by offset for the values
      OffsetTermsRequest offsets{window, query_rows_of(scheme->offset_logits(q), grid), scheme->has_output_term()};
      auto attended = cpu_attention_with_offsets(query_rows_of(q, grid), k, v, {}, mask, offsets, grid.positions);
      context = offsets.buckets ? scheme->add_bucketed_output(attended.context, attended.buckets) : attended.context;
    } else {
      // The scheme's logit term alone: added to a float zero, which a scheme without one returns as is.
      torch::Tensor bias;
      if (scheme) {
        const auto zero = torch::zeros({}, q.options().dtype(torch::kFloat));
        bias = scheme->add_to_logits(zero, q);
        if (bias.is_same(zero)) bias = torch::Tensor();
      }
      context = cpu_attention(query_rows_of(q, grid), k, v, bias, mask, grid.positions);
    }
    if (grid.positions.defined())  // [B, H, Lq, d] → the asked rows, in their order: [R, H·d]
      context_rows = context.transpose(1, 2).reshape({-1, num_heads * head_size}).index_select(0, grid.slots);
  } else if (uses_fused(scheme, probs_out != nullptr)) {
    // The position term is a q/k transform and/or a pure logit bias: rotate q, k and hand
    // mask + bias to SDPA as its attn_mask.
    if (scheme) scheme->transform_qk(q, k);                        // RoPE
    auto mask = finite_mask_for(additive_mask, q.scalar_type());  // [B, 1, 1, L]
    auto bias = scheme ? scheme->add_to_logits(mask, q) : mask;    // broadcasts to [B, H, L, L]
    const double p = is_training() ? attention_dropout->options.p() : 0.0;
    context = fused_attention(q, k, v, bias, p);                   // [B, H, L, d]
  } else {
    auto logits = scheme_logits(q, k, scheme);                     // [B, H, L, L], SPEC §2: terms before the mask
    // The mask in the logits' dtype (bf16 under autocast; schemes add their bias likewise,
    // add_logit_bias): a float32 mask would promote the [B, H, L, L] logits to float32 and add a
    // cast back before probs·V, forward and backward. Softmax accumulates in float32 inside the
    // kernel whatever the dtype (ATen's CPU and CUDA kernels); on CUDA autocast runs it in float32.
    logits = logits + finite_mask_for(additive_mask, logits.scalar_type()).to(logits.scalar_type());  // [B, 1, 1, L]
    auto probs = torch::softmax(logits, -1);                       // [B, H, L, L]
    if (probs_out) *probs_out = probs;
    probs = attention_dropout(probs);
    context = torch::matmul(probs.to(v.scalar_type()), v);         // [B, H, L, d]
    if (scheme) context = scheme->add_to_output(context, probs);
  }
  if (rows.defined()) {  // the rest of the layer acts on each position alone: only the rows asked for
    const auto select = [&](const torch::Tensor& t) { return t.reshape({B * L, t.size(-1)}).index_select(0, rows); };
    if (!context_rows.defined())
      context_rows = select(context.transpose(1, 2).reshape({B, L, num_heads * head_size}));  // [R, H·d]
    return layer_norm(LayerNorm, select(x) + output_dropout(linear_rows(dense, context_rows)));  // [R, H]
  }
  context = context.transpose(1, 2).reshape({B, L, num_heads * head_size});  // [B, L, H·d]
  return layer_norm(LayerNorm, x + output_dropout(linear_rows(dense, context)));
}

bool AlbertAttentionImpl::uses_fused(const RelativeSchemeImpl* scheme, bool probs_requested) const {
  if (backend == AttentionBackend::kEager || !fused_attention_available() || probs_requested) return false;
  if (scheme && scheme->has_output_term()) return false;
  if (backend == AttentionBackend::kFused || !scheme) return true;
  // kAuto: a bias that needs its gradient on the CPU stays eager (see AttentionBackend).
  const bool bias_needs_gradient = torch::GradMode::is_enabled() && [&] {
    for (const auto& p : scheme->parameters())
      if (p.requires_grad()) return true;
    return false;
  }();
  return !(bias_needs_gradient && !query->weight.is_cuda());
}

bool AlbertAttentionImpl::uses_cpu_kernel(const RelativeSchemeImpl* scheme, bool probs_requested,
                                          const torch::Tensor& q) const {
  if (backend != AttentionBackend::kCpuKernel &&
      !(backend == AttentionBackend::kAuto && cpu_attention_native(q.scalar_type())))
    return false;
  // An output term only where the kernel can hand it the probabilities summed by offset.
  if (probs_requested || !cpu_attention_supports(q)) return false;
  if (scheme && scheme->has_output_term() && scheme->offset_window(q.size(2)) < 0) return false;
  return !is_training() || attention_dropout->options.p() == 0.0;
}

void set_attention_backend(torch::nn::Module& model, AttentionBackend backend) {
  for (auto& m : model.modules(/*include_self=*/true))
    if (auto* attention = m->as<AlbertAttentionImpl>()) attention->backend = backend;
}

AlbertLayerImpl::AlbertLayerImpl(const config::ModelConfig& c) : activation(c.hidden_act) {
  attention = register_module("attention", AlbertAttention(c));
  ffn = register_module("ffn", make_linear(c.hidden_size, c.intermediate_size, c.initializer_range));
  ffn_output = register_module("ffn_output", make_linear(c.intermediate_size, c.hidden_size, c.initializer_range));
  full_layer_layer_norm = register_module("full_layer_layer_norm", make_layer_norm(c.hidden_size, c.layer_norm_eps));
  dropout = register_module("dropout", torch::nn::Dropout(c.hidden_dropout_prob));
}

torch::Tensor AlbertLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& additive_mask,
                                       RelativeSchemeImpl* scheme, torch::Tensor* probs_out, const torch::Tensor& rows) {
  auto a = attention(x, additive_mask, scheme, probs_out, rows);
  auto f = linear_rows(ffn, a);  // [B, L, I]; bfloat16 under CPU autocast
  // LibTorch's bf16 tanh-form GELU on the CPU is slower than its fp32 one: evaluate it in fp32 and
  // hand ffn_output the original dtype. The exact (erf) GELU and ReLU compute in float inside the
  // bf16 kernel, so they skip the casts (docs/perf/README.md, "ATen's kernel set and the GELU form").
  const bool tanh_form = activation == config::HiddenAct::kGeluNew || activation == config::HiddenAct::kGeluPytorchTanh;
  auto act = tanh_form && f.scalar_type() == torch::kBFloat16 && f.device().is_cpu()
                 ? model::activation(activation, f.to(torch::kFloat)).to(torch::kBFloat16)
                 : model::activation(activation, f);
  auto h = linear_rows(ffn_output, act);
  return layer_norm(full_layer_layer_norm, a + dropout(h));
}

AlbertLayerGroupImpl::AlbertLayerGroupImpl(const config::ModelConfig& c) {
  albert_layers = register_module("albert_layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.inner_group_num; ++i) {
    layers.emplace_back(c);
    albert_layers->push_back(layers.back());
  }
}

// ---------------------------------------------------------------------------------- transformer
AlbertTransformerImpl::AlbertTransformerImpl(const config::ModelConfig& c)
    : num_hidden_layers(c.num_hidden_layers),
      num_hidden_groups(c.num_hidden_groups),
      inner_group_num(c.inner_group_num) {
  embedding_hidden_mapping_in = register_module(
      "embedding_hidden_mapping_in", make_linear(c.embedding_size, c.hidden_size, c.initializer_range));
  albert_layer_groups = register_module("albert_layer_groups", torch::nn::ModuleList());
  for (int64_t g = 0; g < c.num_hidden_groups; ++g) {
    groups.emplace_back(c);
    albert_layer_groups->push_back(groups.back());
  }
  const std::string& name = c.position.relative;
  schemes = make_configured_schemes(c);
  schemes_per_attention_module = scheme_follows_layer_sharing(c);
  if (!schemes.empty()) {
    auto list = register_module(name, torch::nn::ModuleList());
    for (auto& s : schemes) list->push_back(s);
  }
}

RelativeSchemeImpl* AlbertTransformerImpl::scheme_for(int64_t layer, int64_t inner) const {
  if (schemes.empty()) return nullptr;
  if (schemes.size() == 1) return schemes[0].get();
  const int64_t group = layer / (num_hidden_layers / num_hidden_groups);
  return schemes.at((schemes_per_attention_module ? group : layer) * inner_group_num + inner).get();
}

torch::Tensor AlbertTransformerImpl::forward(const torch::Tensor& embeddings, const torch::Tensor& additive_mask,
                                             const ForwardOptions& options, EncoderOutput* out,
                                             const torch::Tensor& final_rows) {
  auto h = linear_rows(embedding_hidden_mapping_in, embeddings);  // [B, L, H]
  if (options.hidden_states) out->hidden_states.push_back(h);
  for (auto& s : schemes) s->begin_forward(h.size(1));
  const int64_t per_group = num_hidden_layers / num_hidden_groups;
  for (int64_t i = 0; i < num_hidden_layers; ++i) {
    auto& group = groups[i / per_group];  // SPEC §3: layer i uses group int(i / (L / groups))
    for (int64_t j = 0; j < inner_group_num; ++j) {
      torch::Tensor probs;
      const bool last = i == num_hidden_layers - 1 && j == inner_group_num - 1;
      h = group->layers[j](h, additive_mask, scheme_for(i, j), options.attentions ? &probs : nullptr,
                           last ? final_rows : torch::Tensor());
      if (options.attentions) out->attentions.push_back(probs);
    }
    if (options.hidden_states) out->hidden_states.push_back(h);
  }
  return h;
}

// ---------------------------------------------------------------------------------- AlbertModel
AlbertModelImpl::AlbertModelImpl(const config::ModelConfig& c) : config(c) {
  check_model_config(c);
  embeddings = register_module("embeddings", AlbertEmbeddings(c));
  encoder = register_module("encoder", AlbertTransformer(c));
  pooler = register_module("pooler", make_linear(c.hidden_size, c.hidden_size, c.initializer_range));
}

EncoderOutput AlbertModelImpl::forward(const torch::Tensor& input_ids_in, const torch::Tensor& token_type_ids_in,
                                       const torch::Tensor& attention_mask_in, const ForwardOptions& options) {
  const auto device = pooler->weight.device();
  auto input_ids = input_ids_in.to(device, torch::kLong);
  TORCH_CHECK(input_ids.dim() == 2, "input_ids must be [B, L], got ", input_ids.sizes());
  auto token_type_ids = token_type_ids_in.defined() ? token_type_ids_in.to(device, torch::kLong)
                                                    : torch::zeros_like(input_ids);
  auto attention_mask = attention_mask_in.defined() ? attention_mask_in.to(device) : torch::ones_like(input_ids);
  // Additive mask [B, 1, 1, L]: 0 on tokens, float32 min on padding (as HF).
  auto additive_mask = (1.0 - attention_mask.to(torch::kFloat)).view({input_ids.size(0), 1, 1, input_ids.size(1)}) *
                       std::numeric_limits<float>::lowest();
  EncoderOutput out;
  RelativeSchemeImpl* scheme = encoder->schemes.empty() ? nullptr : encoder->schemes[0].get();
  auto e = embeddings(input_ids, token_type_ids, scheme, options.position_offsets);  // [B, L, E]
  if (options.hidden_states) out.embedding_output = e;
  if (!options.final_rows.defined()) {
    out.last_hidden_state = encoder(e, additive_mask, options, &out);             // [B, L, H]
    out.pooler_output = torch::tanh(pooler(out.last_hidden_state.select(1, 0)));  // [B, H]
    return out;
  }
  // Sparse final layer: each sequence's first position (the pooler's) first, then the rows asked for.
  const int64_t B = input_ids.size(0), L = input_ids.size(1);
  const auto asked = options.final_rows.to(device, torch::kLong);
  const auto rows = torch::cat({torch::arange(B, asked.options()) * L, asked});
  torch::Tensor h;
  if (options.hidden_states) {  // every layer's full state is asked for: select after the last one
    h = encoder(e, additive_mask, options, &out);
    h = h.reshape({B * L, h.size(-1)}).index_select(0, rows);
  } else {
    h = encoder(e, additive_mask, options, &out, rows);  // [B + R, H]
  }
  out.pooler_output = torch::tanh(pooler(h.narrow(0, 0, B)));  // [B, H]
  out.final_rows_hidden = h.narrow(0, B, asked.size(0));        // [R, H]
  return out;
}

// ---------------------------------------------------------------------------------- heads
AlbertMLMHeadImpl::AlbertMLMHeadImpl(const config::ModelConfig& c, torch::Tensor word_embeddings)
    : decoder_weight(std::move(word_embeddings)), activation(c.hidden_act) {
  LayerNorm = register_module("LayerNorm", make_layer_norm(c.embedding_size, c.layer_norm_eps));
  bias = register_parameter("bias", torch::zeros({c.vocab_size}));
  dense = register_module("dense", make_linear(c.hidden_size, c.embedding_size, c.initializer_range));
}

torch::Tensor AlbertMLMHeadImpl::forward(const torch::Tensor& hidden) {
  auto x = layer_norm(LayerNorm, model::activation(activation, linear_rows(dense, hidden)));  // [..., E]
  return model::linear(x, decoder_weight, bias);                    // [..., V]
}

AlbertSOPHeadImpl::AlbertSOPHeadImpl(const config::ModelConfig& c) {
  dropout = register_module("dropout", torch::nn::Dropout(c.classifier_dropout_prob));
  classifier = register_module("classifier", make_linear(c.hidden_size, 2, c.initializer_range));
}

torch::Tensor AlbertSOPHeadImpl::forward(const torch::Tensor& pooled) { return classifier(dropout(pooled)); }

AlbertForPreTrainingImpl::AlbertForPreTrainingImpl(const config::ModelConfig& c) {
  albert = register_module("albert", AlbertModel(c));
  predictions = register_module("predictions", AlbertMLMHead(c, albert->embeddings->word_embeddings->weight));
  sop_classifier = register_module("sop_classifier", AlbertSOPHead(c));
}

PretrainingOutput AlbertForPreTrainingImpl::forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                                                    const torch::Tensor& attention_mask,
                                                    const torch::Tensor& masked_positions,
                                                    const ForwardOptions& options) {
  TORCH_CHECK(!options.final_rows.defined(), "AlbertForPreTraining chooses final_rows itself (head_outputs_only)");
  // With head_outputs_only the final layer runs only where the heads read: the masked positions.
  const bool sparse = options.head_outputs_only && masked_positions.defined();
  ForwardOptions encoder_options = options;
  if (sparse) encoder_options.final_rows = masked_positions;
  PretrainingOutput out;
  out.encoder = albert(input_ids, token_type_ids, attention_mask, encoder_options);
  const auto& h = out.encoder.last_hidden_state;  // [B, L, H] (undefined when sparse)
  if (sparse) {
    out.prediction_logits = predictions(out.encoder.final_rows_hidden);  // [M, V]
  } else if (masked_positions.defined()) {
    auto flat = h.reshape({-1, h.size(-1)});  // [B·L, H]
    out.prediction_logits = predictions(flat.index_select(0, masked_positions.to(h.device(), torch::kLong)));  // [M, V]
  } else {
    out.prediction_logits = predictions(h);  // [B, L, V]
  }
  out.sop_logits = sop_classifier(out.encoder.pooler_output);  // [B, 2]
  return out;
}

AlbertForSequenceClassificationImpl::AlbertForSequenceClassificationImpl(const config::ModelConfig& c,
                                                                         int64_t num_labels_)
    : num_labels(num_labels_) {
  TORCH_CHECK(num_labels >= 1, "num_labels must be >= 1, got ", num_labels);
  albert = register_module("albert", AlbertModel(c));
  dropout = register_module("dropout", torch::nn::Dropout(c.classifier_dropout_prob));
  classifier = register_module("classifier", make_linear(c.hidden_size, num_labels, c.initializer_range));
}

ClassificationOutput AlbertForSequenceClassificationImpl::forward(const torch::Tensor& input_ids,
                                                                  const torch::Tensor& token_type_ids,
                                                                  const torch::Tensor& attention_mask,
                                                                  const ForwardOptions& options) {
  ClassificationOutput out;
  ForwardOptions sparse = options;
  if (options.head_outputs_only) sparse.final_rows = torch::empty({0}, torch::kLong);  // the pooler's rows alone
  out.encoder = albert(input_ids, token_type_ids, attention_mask, sparse);
  out.logits = classifier(dropout(out.encoder.pooler_output));  // [B, num_labels]
  return out;
}

// ---------------------------------------------------------------------------------- losses
MaskedTargets masked_targets_from_labels(const torch::Tensor& labels) {
  auto flat = labels.reshape({-1}).to(torch::kLong);
  MaskedTargets t;
  t.positions = (flat != -100).nonzero().view({-1});
  t.labels = flat.index_select(0, t.positions);
  return t;
}

torch::Tensor mlm_loss(const torch::Tensor& logits, const torch::Tensor& labels) {
  auto l = logits.reshape({-1, logits.size(-1)}).to(torch::kFloat);
  return torch::nn::functional::cross_entropy(
      l, labels.reshape({-1}).to(l.device(), torch::kLong),
      torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-100));
}

torch::Tensor sop_loss(const torch::Tensor& logits, const torch::Tensor& labels) {
  return torch::nn::functional::cross_entropy(logits.reshape({-1, 2}).to(torch::kFloat),
                                              labels.reshape({-1}).to(logits.device(), torch::kLong));
}

torch::Tensor classification_loss(const torch::Tensor& logits, const torch::Tensor& labels) {
  if (logits.size(-1) == 1)  // regression (HF: MSE of squeezed logits and labels)
    return torch::mse_loss(logits.reshape({-1}).to(torch::kFloat), labels.reshape({-1}).to(logits.device(), torch::kFloat));
  return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}).to(torch::kFloat),
                                              labels.reshape({-1}).to(logits.device(), torch::kLong));
}

int64_t positional_parameter_count(const config::ModelConfig& c) { return scheme_parameter_count(c); }

}  // namespace tisa::model
