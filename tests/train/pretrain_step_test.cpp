// PretrainStep (one update) and the architecture check of resume: hand-made batches on the tiny
// model, the NaN path leaves weights untouched, accumulation of identical micro-batches equals one,
// and (issue 16) accumulation of micro-batches with different masked-token counts equals the
// whole batch; the generic UpdateStep's normalisation by the counts of the whole update.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "common/error.h"
#include "config/config.h"
#include "model/albert.h"
#include "optim/optimizer.h"
#include "optim/schedule.h"
#include "train/architecture_check.h"
#include "train/pretrain_step.h"
#include "train/update_step.h"

namespace {

using namespace tisa;

config::Config tiny_config() {
  config::Config c;
  c.model.vocab_size = 50;
  c.model.embedding_size = 8;
  c.model.hidden_size = 16;
  c.model.num_hidden_layers = 2;
  c.model.num_attention_heads = 2;
  c.model.intermediate_size = 32;
  c.model.max_position_embeddings = 16;
  c.model.classifier_dropout_prob = 0.0;  // the SOP head's dropout would make runs depend on RNG use
  c.optimizer.lr = 0.01;
  c.schedule.type = config::ScheduleType::kConstant;
  return c;
}

// Two examples of 6 and 4 tokens padded to 6, two masked positions each.
data::PretrainBatch hand_batch() {
  data::PretrainBatch b;
  b.batch_size = 2;
  b.seq_len = 6;
  b.input_ids = {2, 10, 4, 3, 12, 3, /**/ 2, 4, 3, 3, 0, 0};
  b.token_type_ids = {0, 0, 0, 0, 1, 1, /**/ 0, 0, 0, 1, 0, 0};
  b.attention_mask = {1, 1, 1, 1, 1, 1, /**/ 1, 1, 1, 1, 0, 0};
  b.lengths = {6, 4};
  b.masked_positions = {2, 4, 7, 8};
  b.masked_labels = {11, 12, 20, 3};
  b.sop_labels = {1, 0};
  b.num_tokens = 10;
  return b;
}

struct Fixture {
  config::Config cfg = tiny_config();
  model::AlbertForPreTraining model{nullptr};
  std::unique_ptr<optim::Optimizer> opt;
  std::unique_ptr<optim::LrSchedule> schedule;
  std::unique_ptr<train::PretrainStep> step;
  // eps: LAMB/Adam's first update is ~sign(g) and amplifies rounding in tiny gradients; a large
  // eps makes the update linear in g so that two ways of computing g compare with a tolerance.
  explicit Fixture(double eps = 1e-6) {
    cfg.optimizer.eps = eps;
    torch::manual_seed(1);
    model = model::AlbertForPreTraining(cfg.model);
    optim::NamedParams params;
    for (const auto& p : model->named_parameters()) params.emplace_back(p.key(), p.value());
    opt = optim::make_optimizer(cfg.optimizer, params);
    schedule = std::make_unique<optim::LrSchedule>(cfg.schedule, cfg.optimizer.lr, 10);
    step = std::make_unique<train::PretrainStep>(model, *opt, *schedule, 1.0, torch::kCPU, config::Precision::kFp32);
  }
  std::vector<torch::Tensor> snapshot() const {
    std::vector<torch::Tensor> out;
    for (const auto& p : model->parameters()) out.push_back(p.detach().clone());
    return out;
  }
};

TEST(PretrainStepTest, UpdateChangesWeightsAndLossIsMlmPlusSop) {
  Fixture f;
  auto before = f.snapshot();
  auto r = (*f.step)({hand_batch()}, 0);
  EXPECT_TRUE(r.applied);
  EXPECT_NEAR(r.loss, train::mlm_loss(r) + train::sop_loss(r), 1e-5);
  // Untrained: MLM loss near ln(V) = ln 50, SOP near ln 2.
  EXPECT_NEAR(train::mlm_loss(r), std::log(50.0), 1.0);
  EXPECT_NEAR(train::sop_loss(r), std::log(2.0), 0.5);
  EXPECT_GT(r.grad_norm, 0.0);
  EXPECT_EQ(r.tokens, 10);
  EXPECT_EQ(f.opt->num_updates(), 1);
  auto after = f.snapshot();
  int changed = 0;
  for (size_t i = 0; i < before.size(); ++i) changed += !torch::equal(before[i], after[i]);
  EXPECT_GT(changed, 0);
  for (const auto& p : f.model->parameters()) EXPECT_FALSE(p.grad().defined()) << "gradients must be freed";
}

TEST(PretrainStepTest, NanLossSkipsTheUpdate) {
  Fixture f;
  f.step->loss_hook = [](int64_t, torch::Tensor& loss) { loss = loss * std::nan(""); };
  auto before = f.snapshot();
  auto r = (*f.step)({hand_batch()}, 0);
  EXPECT_FALSE(r.applied);
  EXPECT_TRUE(std::isnan(r.loss));
  EXPECT_EQ(f.opt->num_updates(), 0);
  auto after = f.snapshot();
  for (size_t i = 0; i < before.size(); ++i) EXPECT_TRUE(torch::equal(before[i], after[i]));
}

TEST(PretrainStepTest, AccumulatingIdenticalMicroBatchesEqualsOne) {
  Fixture a(1.0), b(1.0);
  (*a.step)({hand_batch()}, 0);
  (*b.step)({hand_batch(), hand_batch()}, 0);
  auto pa = a.snapshot(), pb = b.snapshot();
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(torch::allclose(pa[i], pb[i], 1e-5, 1e-7)) << i;
}

// One example of 3 tokens with a single masked position: fewer masked tokens than hand_batch().
data::PretrainBatch short_batch() {
  data::PretrainBatch b;
  b.batch_size = 1;
  b.seq_len = 3;
  b.input_ids = {2, 4, 3};
  b.token_type_ids = {0, 0, 0};
  b.attention_mask = {1, 1, 1};
  b.lengths = {3};
  b.masked_positions = {1};
  b.masked_labels = {17};
  b.sop_labels = {0};
  b.num_tokens = 3;
  return b;
}

// The rows of `a` and `b` in one batch, padded (id 0) to the longer sequence.
data::PretrainBatch merge(const data::PretrainBatch& a, const data::PretrainBatch& b) {
  data::PretrainBatch m;
  m.batch_size = a.batch_size + b.batch_size;
  m.seq_len = std::max(a.seq_len, b.seq_len);
  for (const auto* x : {&a, &b}) {
    const int64_t row0 = x == &a ? 0 : a.batch_size;
    for (int64_t r = 0; r < x->batch_size; ++r)
      for (int64_t t = 0; t < m.seq_len; ++t) {
        const bool in = t < x->seq_len;
        m.input_ids.push_back(in ? x->input_ids[r * x->seq_len + t] : 0);
        m.token_type_ids.push_back(in ? x->token_type_ids[r * x->seq_len + t] : 0);
        m.attention_mask.push_back(in ? x->attention_mask[r * x->seq_len + t] : 0);
      }
    for (size_t k = 0; k < x->masked_positions.size(); ++k) {
      const int64_t flat = x->masked_positions[k];
      m.masked_positions.push_back((row0 + flat / x->seq_len) * m.seq_len + flat % x->seq_len);
      m.masked_labels.push_back(x->masked_labels[k]);
    }
    m.lengths.insert(m.lengths.end(), x->lengths.begin(), x->lengths.end());
    m.sop_labels.insert(m.sop_labels.end(), x->sop_labels.begin(), x->sop_labels.end());
    m.num_tokens += x->num_tokens;
  }
  return m;
}

// Issue 16: micro-batches with different masked-token counts (4 and 1) accumulate to exactly the
// update of the batch that holds both: the loss is normalised by the counts of the whole update,
// not averaged per micro-batch (which weighted the lone masked token 4x).
TEST(PretrainStepTest, AccumulationOfUnequalMicroBatchesEqualsTheWholeBatch) {
  Fixture whole(1.0), split(1.0);
  auto rw = (*whole.step)({merge(hand_batch(), short_batch())}, 0);
  auto rs = (*split.step)({hand_batch(), short_batch()}, 0);
  EXPECT_NEAR(train::mlm_loss(rs), train::mlm_loss(rw), 1e-5);
  EXPECT_NEAR(train::sop_loss(rs), train::sop_loss(rw), 1e-5);
  EXPECT_NEAR(rs.loss, rw.loss, 1e-5);
  EXPECT_NEAR(rs.grad_norm, rw.grad_norm, 1e-5 * rw.grad_norm);
  EXPECT_EQ(rs.tokens, rw.tokens);
  auto pw = whole.snapshot(), ps = split.snapshot();
  for (size_t i = 0; i < pw.size(); ++i) EXPECT_TRUE(torch::allclose(ps[i], pw[i], 1e-5, 1e-7)) << i;
  // The mean of the two micro-batch means is another number: the test can tell the difference.
  Fixture probe;
  probe.model->eval();
  torch::NoGradGuard ng;
  const double m1 = train::pretraining_losses(probe.model, train::to_device(hand_batch(), torch::kCPU)).mlm.item<double>();
  const double m2 = train::pretraining_losses(probe.model, train::to_device(short_batch(), torch::kCPU)).mlm.item<double>();
  const double all = train::pretraining_losses(probe.model, train::to_device(merge(hand_batch(), short_batch()), torch::kCPU))
                         .mlm.item<double>();
  EXPECT_NEAR(all, (4 * m1 + m2) / 5, 1e-5);
  EXPECT_GT(std::abs(all - (m1 + m2) / 2), 1e-4);
}

// The generic update (train/update_step.h): sums over items divided by the update's counts.
TEST(UpdateStepTest, TermsAreSumsOverTheCountsOfTheWholeUpdate) {
  auto w = torch::zeros({1}, torch::requires_grad());
  optim::NamedParams params = {{"w", w}};
  config::OptimizerConfig oc;
  oc.type = config::OptimizerType::kAdamW;
  auto opt = optim::make_optimizer(oc, params);
  config::ScheduleConfig sc;
  sc.type = config::ScheduleType::kConstant;
  optim::LrSchedule schedule(sc, 0.1, 10);
  train::UpdateStep update(*opt, schedule, 0.0);
  // Two micro-batches: item losses (w - x)² with x = {1} and {2, 3, 6}; a second term counts 2 + 0.
  const std::vector<std::vector<double>> xs = {{1}, {2, 3, 6}};
  auto forward = [&](size_t i) {
    torch::Tensor sum = torch::zeros({});
    for (double x : xs[i]) sum = sum + (w - x).pow(2).sum();
    return std::vector<torch::Tensor>{sum, w.sum() * (i == 0 ? 2.0 : 0.0)};
  };
  auto r = update({{1, 2}, {3, 0}}, forward, 0);
  ASSERT_TRUE(r.applied);
  ASSERT_EQ(r.terms.size(), 2u);
  EXPECT_NEAR(r.terms[0], (1 + 4 + 9 + 36) / 4.0, 1e-6);  // mean over all 4 items at w = 0
  EXPECT_NEAR(r.terms[1], 0.0, 1e-9);
  EXPECT_NEAR(r.loss, r.terms[0] + r.terms[1], 1e-6);
  // d/dw at w = 0: term 0 = 2·(0 − mean x) = −6, term 1 = 2·1/2 = 1.
  EXPECT_NEAR(r.grad_norm, 5.0, 1e-5);
}

TEST(PretrainStepTest, MaskedPositionsOnlyDecideTheMlmLoss) {
  // Changing a label of an unmasked position changes nothing; changing a masked label does.
  Fixture f;
  f.model->eval();
  auto b = train::to_device(hand_batch(), torch::kCPU);
  torch::NoGradGuard ng;
  auto l1 = train::pretraining_losses(f.model, b).mlm.item<double>();
  b.masked_labels[0] = 30;
  auto l2 = train::pretraining_losses(f.model, b).mlm.item<double>();
  EXPECT_NE(l1, l2);
}

TEST(ArchitectureCheckTest, DifferingArchitectureKeyIsNamed) {
  config::ModelConfig ckpt = tiny_config().model, want = ckpt;
  want.hidden_size = 32;
  want.position.relative = "tisa";
  try {
    train::reconcile_model_config(ckpt, want, "run/checkpoints/step-000010");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("model.hidden_size: the checkpoint run/checkpoints/step-000010 has 16, the config says 32"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("model.position.relative"), std::string::npos) << msg;
  }
}

TEST(ArchitectureCheckTest, TrainingTimeKeysMayDifferAndComeFromTheConfig) {
  config::ModelConfig ckpt = tiny_config().model, want = ckpt;
  want.hidden_dropout_prob = 0.1;
  auto out = train::reconcile_model_config(ckpt, want, "x");
  EXPECT_EQ(out.hidden_dropout_prob, 0.1);
  EXPECT_EQ(out.hidden_size, 16);
}

// training.position_span: the offsets are a pure function of (seed, update, rank, micro-batch),
// uniform over 0 … span−L, and the update trains the rows they reach and no others.
TEST(PretrainStepTest, PositionOffsetsAreDrawnFromTheUpdateAndCoverTheSpan) {
  const auto a = train::draw_position_offsets(7, 3, 0, 1, 4096, 6, 12);
  EXPECT_EQ(a, train::draw_position_offsets(7, 3, 0, 1, 4096, 6, 12));
  EXPECT_NE(a, train::draw_position_offsets(7, 4, 0, 1, 4096, 6, 12));
  EXPECT_NE(a, train::draw_position_offsets(7, 3, 1, 1, 4096, 6, 12));
  EXPECT_NE(a, train::draw_position_offsets(7, 3, 0, 0, 4096, 6, 12));
  EXPECT_NE(a, train::draw_position_offsets(8, 3, 0, 1, 4096, 6, 12));
  std::vector<int> seen(7, 0);
  for (int64_t o : a) {
    ASSERT_GE(o, 0);
    ASSERT_LE(o, 6);
    ++seen[static_cast<size_t>(o)];
  }
  for (int n : seen) EXPECT_GT(n, 4096 / 7 / 2);  // each of the 7 offsets drawn, roughly evenly
  EXPECT_EQ(train::draw_position_offsets(7, 3, 0, 1, 5, 6, 6), std::vector<int64_t>(5, 0));
  EXPECT_THROW(train::draw_position_offsets(7, 3, 0, 1, 5, 6, 5), std::exception);
}

TEST(PretrainStepTest, PositionSpanTrainsTheRowsItShiftsToAndNoOthers) {
  // Rows the update does not read keep their values exactly (no weight decay; Adam's moments
  // of an untouched row stay 0). The batch has 6 positions; the table 16 rows.
  auto rows_changed = [](int64_t span) {
    config::Config c = tiny_config();
    c.optimizer.weight_decay = 0.0;
    torch::manual_seed(1);
    model::AlbertForPreTraining model(c.model);
    optim::NamedParams params;
    for (const auto& p : model->named_parameters()) params.emplace_back(p.key(), p.value());
    auto opt = optim::make_optimizer(c.optimizer, params);
    optim::LrSchedule schedule(c.schedule, c.optimizer.lr, 10);
    train::PretrainStep step(model, *opt, schedule, 1.0, torch::kCPU, config::Precision::kFp32);
    step.position_span = span;
    step.position_seed = 5;
    const auto& table = model->albert->embeddings->position_embeddings->weight;
    const auto before = table.detach().clone();
    for (int64_t u = 0; u < 8; ++u) step({hand_batch()}, u);
    return table.detach().ne(before).any(1);  // [16]
  };
  const auto unshifted = rows_changed(0), shifted = rows_changed(12);
  for (int64_t row = 0; row < 16; ++row) {
    EXPECT_EQ(unshifted[row].item<bool>(), row < 6) << "span 0, row " << row;
    if (row >= 12) {
      EXPECT_FALSE(shifted[row].item<bool>()) << "span 12, row " << row;
    }
  }
  EXPECT_TRUE(shifted.narrow(0, 6, 6).any().item<bool>()) << "no row past the batch's 6 positions was trained";
}

}  // namespace
