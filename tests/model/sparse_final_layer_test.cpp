// The sparse final layer (ForwardOptions::final_rows / head_outputs_only): the last layer runs only
// at the rows the heads read (past its attention; on the CPU attention kernel its queries too). Against the full model, per position scheme and
// attention path: the heads' outputs and every parameter's gradient equal to float rounding.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "model/albert.h"
#include "model/autocast.h"
#include "scheme_variants.h"

namespace {

using tisa::model::AttentionBackend;
using tisa::model::ForwardOptions;

struct HeadPass {
  torch::Tensor mlm, sop;                      // the heads' outputs
  torch::Tensor rows;                          // final_rows_hidden (sparse) or the same rows of the full state
  std::map<std::string, torch::Tensor> grads;  // every parameter's gradient
};

constexpr int64_t kBatch = 3, kLength = 11;

// A batch with padding (row 1 padded from 7, row 2 from 2) and masked positions b·L + t in every
// row, one of them a first position (row 2's, which the pooler also reads) and one on padding.
struct Batch {
  torch::Tensor ids, mask, masked;
};
Batch batch() {
  torch::manual_seed(3);
  Batch b{torch::randint(5, 50, {kBatch, kLength}, torch::kLong), torch::ones({kBatch, kLength}, torch::kLong),
          torch::tensor(std::vector<int64_t>{1, 4, 9, kLength + 2, kLength + 6, 2 * kLength, 2 * kLength + 5})};
  b.mask[1].narrow(0, 7, 4).fill_(0);
  b.mask[2].narrow(0, 2, 9).fill_(0);
  return b;
}

std::map<std::string, torch::Tensor> gradients(torch::nn::Module& m) {
  std::map<std::string, torch::Tensor> g;
  for (const auto& p : m.named_parameters())
    if (p.value().grad().defined()) g[p.key()] = p.value().grad().clone();
  return g;
}

// One forward with or without the sparse final layer: `forward` returns the heads' outputs (and
// the final rows), a loss reaches every output with different weights, backward.
template <typename Forward>
HeadPass head_pass(torch::nn::Module& m, bool sparse, AttentionBackend backend, Forward forward) {
  tisa::model::set_attention_backend(m, backend);
  m.zero_grad();
  ForwardOptions options;
  options.head_outputs_only = sparse;
  HeadPass r = forward(batch(), options);
  auto w = torch::linspace(-1, 1, r.mlm.numel()).view(r.mlm.sizes());
  ((r.mlm * w).sum() + r.sop.pow(2).sum()).backward();
  r.mlm = r.mlm.detach().clone();
  r.sop = r.sop.detach().clone();
  r.grads = gradients(m);
  return r;
}

HeadPass pretraining_pass(tisa::model::AlbertForPreTraining& m, bool sparse, AttentionBackend backend) {
  return head_pass(*m, sparse, backend, [&](const Batch& b, const ForwardOptions& options) {
    auto out = m->forward(b.ids, torch::Tensor(), b.mask, b.masked, options);
    const auto& h = out.encoder.last_hidden_state;
    EXPECT_EQ(h.defined(), !sparse);
    auto rows = sparse ? out.encoder.final_rows_hidden : h.reshape({-1, h.size(-1)}).index_select(0, b.masked);
    return HeadPass{out.prediction_logits, out.sop_logits, rows.detach().clone(), {}};
  });
}

HeadPass classification_pass(tisa::model::AlbertForSequenceClassification& m, bool sparse, AttentionBackend backend) {
  return head_pass(*m, sparse, backend, [&](const Batch& b, const ForwardOptions& options) {
    auto out = m->forward(b.ids, torch::Tensor(), b.mask, options);
    EXPECT_EQ(out.encoder.last_hidden_state.defined(), !sparse);
    return HeadPass{out.logits, out.encoder.pooler_output, torch::Tensor(), {}};
  });
}

// |got − ref| within `rel` of ref's norm, plus `floor` for tensors that are zero in exact
// arithmetic (the key bias's gradient: a constant per query row, which the softmax ignores).
void expect_close(const torch::Tensor& got, const torch::Tensor& ref, double rel, double floor, const std::string& what) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.sizes(), ref.sizes()) << what;
  const double size = ref.to(torch::kDouble).norm().item<double>();
  const double error = (got.to(torch::kDouble) - ref.to(torch::kDouble)).norm().item<double>();
  EXPECT_LE(error, rel * size + floor) << what << ": error " << error << ", norm " << size;
}

void expect_same_pass(const HeadPass& sparse, const HeadPass& full, double rel, const std::string& what,
                      double floor = 1e-7) {
  expect_close(sparse.mlm, full.mlm, rel, floor, what + " head logits");
  expect_close(sparse.sop, full.sop, rel, floor, what + " second output");
  if (full.rows.defined()) expect_close(sparse.rows, full.rows, rel, floor, what + " final rows");
  ASSERT_EQ(sparse.grads.size(), full.grads.size()) << what;
  for (const auto& [name, g] : full.grads) {
    ASSERT_TRUE(sparse.grads.count(name)) << what << " " << name;
    expect_close(sparse.grads.at(name), g, rel, floor, what + " grad " + name);
  }
}

class SparseFinalLayer : public ::testing::TestWithParam<tisa::test::SchemeVariant> {};

// Per scheme, on the eager attention and on the path `auto` picks (the CPU kernel on AVX-512).
TEST_P(SparseFinalLayer, PretrainingHeadsAndGradientsEqualTheFullModel) {
  const auto& variant = GetParam();
  torch::manual_seed(11);
  tisa::model::AlbertForPreTraining model(tisa::test::tiny_model(variant));
  model->train();
  for (auto backend : {AttentionBackend::kEager, AttentionBackend::kAuto}) {
    const std::string what = variant.name + (backend == AttentionBackend::kEager ? " eager" : " auto");
    const auto full = pretraining_pass(model, false, backend);
    const auto sparse = pretraining_pass(model, true, backend);
    expect_same_pass(sparse, full, 1e-6, what);
  }
}

TEST_P(SparseFinalLayer, ClassifierAndGradientsEqualTheFullModel) {
  const auto& variant = GetParam();
  torch::manual_seed(12);
  tisa::model::AlbertForSequenceClassification model(tisa::test::tiny_model(variant), 3);
  model->train();
  for (auto backend : {AttentionBackend::kEager, AttentionBackend::kAuto}) {
    const std::string what = variant.name + (backend == AttentionBackend::kEager ? " eager" : " auto");
    expect_same_pass(classification_pass(model, true, backend), classification_pass(model, false, backend), 1e-6,
                     what);
  }
}

INSTANTIATE_TEST_SUITE_P(Schemes, SparseFinalLayer, ::testing::ValuesIn(tisa::test::scheme_variants()),
                         [](const auto& info) { return tisa::test::variant_test_name(info.param); });

// ALBERT's sharing: the last application of a shared group (3 applications of one group of two
// inner layers) is the only one cut, and the per-layer scheme modules still get their gradients.
TEST(SparseFinalLayerSharing, OnlyTheLastApplicationOfASharedGroupIsCut) {
  auto config = tisa::test::tiny_model({"absolute+tisa", true, "tisa", ""});
  config.num_hidden_layers = 3;
  config.num_hidden_groups = 1;
  config.inner_group_num = 2;
  torch::manual_seed(13);
  tisa::model::AlbertForPreTraining model(config);
  model->train();
  expect_same_pass(pretraining_pass(model, true, AttentionBackend::kAuto),
                   pretraining_pass(model, false, AttentionBackend::kAuto), 1e-6, "shared group");
}

// With every layer's state asked for, the final layer runs in full and the rows are selected after it.
TEST(SparseFinalLayerSharing, HiddenStatesKeepTheFullFinalLayer) {
  torch::manual_seed(14);
  tisa::model::AlbertModel model(tisa::test::tiny_model({"tisa", false, "tisa", ""}));
  model->eval();
  torch::NoGradGuard no_grad;
  const auto b = batch();
  ForwardOptions full_options;
  full_options.hidden_states = true;
  const auto full = model->forward(b.ids, torch::Tensor(), b.mask, full_options);
  ForwardOptions sparse_options = full_options;
  sparse_options.final_rows = b.masked;
  const auto sparse = model->forward(b.ids, torch::Tensor(), b.mask, sparse_options);
  ASSERT_EQ(sparse.hidden_states.size(), full.hidden_states.size());
  EXPECT_TRUE(sparse.hidden_states.back().equal(full.last_hidden_state));
  EXPECT_TRUE(sparse.final_rows_hidden.equal(full.last_hidden_state.reshape({-1, 16}).index_select(0, b.masked)));
  EXPECT_TRUE(sparse.pooler_output.equal(full.pooler_output));
}

// Rows in any order, repeated (more often than a sequence has positions) and at the pooler's
// position: on the CPU attention kernel, which then computes only these query rows, each row
// equals the full model's, for a bias scheme and for Shaw's offset terms.
TEST(SparseFinalLayerSharing, RowsInAnyOrderAndRepeatedOnTheKernel) {
  std::vector<int64_t> asked{2 * kLength + 5, 1, 1, 0, kLength + 6, 2 * kLength};
  asked.insert(asked.end(), kLength + 1, kLength + 3);  // L + 1 times one row of sequence 1
  const auto rows = torch::tensor(asked);
  for (const char* scheme : {"tisa", "shaw"}) {
    SCOPED_TRACE(scheme);
    torch::manual_seed(16);
    tisa::model::AlbertModel model(tisa::test::tiny_model({scheme, false, scheme, ""}));
    model->eval();
    tisa::model::set_attention_backend(*model, AttentionBackend::kCpuKernel);
    torch::NoGradGuard no_grad;
    const auto b = batch();
    const auto full = model->forward(b.ids, torch::Tensor(), b.mask, ForwardOptions{});
    ForwardOptions sparse_options;
    sparse_options.final_rows = rows;
    const auto sparse = model->forward(b.ids, torch::Tensor(), b.mask, sparse_options);
    const auto expected = full.last_hidden_state.reshape({-1, 16}).index_select(0, rows);
    ASSERT_EQ(sparse.final_rows_hidden.sizes(), expected.sizes());
    EXPECT_LE((sparse.final_rows_hidden - expected).norm().item<double>(), 1e-6 * expected.norm().item<double>());
    EXPECT_LE((sparse.pooler_output - full.pooler_output).norm().item<double>(),
              1e-6 * full.pooler_output.norm().item<double>());
  }
}

// Under bf16 autocast the two paths round alike: within a few bf16 steps of each other.
TEST(SparseFinalLayerSharing, Bf16AutocastAgreesWithTheFullModel) {
  torch::manual_seed(15);
  tisa::model::AlbertForPreTraining model(tisa::test::tiny_model({"absolute+tisa", true, "tisa", ""}));
  model->train();
  tisa::model::AutocastScope autocast(torch::kCPU, true);
  expect_same_pass(pretraining_pass(model, true, AttentionBackend::kAuto),
                   pretraining_pass(model, false, AttentionBackend::kAuto), 2e-2, "bf16", 1e-5);
}

}  // namespace
