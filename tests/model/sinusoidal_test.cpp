// Fixed sinusoidal absolute positions (model/position/sinusoidal.h): the table of Vaswani et al.
// evaluated element by element, added before the embedding LayerNorm, no parameters, and usable
// past max_position_embeddings.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "model/albert.h"
#include "model/position/sinusoidal.h"

namespace {

TEST(Sinusoidal, TableIsVaswanisFormula) {
  const int64_t L = 6, E = 7;  // odd E: the last column is a sine
  auto pe = tisa::model::sinusoidal_table(L, E);
  for (int64_t p = 0; p < L; ++p)
    for (int64_t c = 0; c < E; ++c) {
      const double angle = p / std::pow(10000.0, 2.0 * (c / 2) / E);
      EXPECT_NEAR(pe[p][c].item<double>(), c % 2 == 0 ? std::sin(angle) : std::cos(angle), 1e-12) << p << "," << c;
    }
}

TEST(Sinusoidal, AddsTheTableToTheEmbeddingsAndWorksPastTheTableLength) {
  tisa::config::ModelConfig c;
  c.vocab_size = 20;
  c.embedding_size = 8;
  c.hidden_size = 16;
  c.num_hidden_layers = 1;
  c.num_attention_heads = 2;
  c.intermediate_size = 16;
  c.max_position_embeddings = 4;
  c.position.absolute = false;
  c.position.relative = "sinusoidal";
  torch::manual_seed(0);
  tisa::model::AlbertModel m(c);
  m->eval();
  EXPECT_EQ(tisa::model::positional_parameter_count(c), 0);
  auto ids = torch::full({1, 10}, 5L);  // one word repeated, 10 > 4 rows
  tisa::model::ForwardOptions with_hidden_states;
  with_hidden_states.hidden_states = true;
  auto out = m->forward(ids, {}, {}, with_hidden_states);
  auto e = out.embedding_output[0];  // [10, 8]: rows differ only through the positions
  EXPECT_GT((e[0] - e[9]).abs().max().item<double>(), 1e-3);
  auto& emb = *m->embeddings;
  auto x = emb.word_embeddings(ids) + emb.token_type_embeddings(torch::zeros_like(ids));
  // Default scale "init": the table times initializer_range·√2.
  auto table = tisa::model::sinusoidal_table(10, 8).to(torch::kFloat) * (c.initializer_range * std::sqrt(2.0));
  auto want = emb.LayerNorm(x + table);
  EXPECT_TRUE(torch::allclose(out.embedding_output, want, 1e-5, 1e-6));
}

// The three conventions of sinusoidal.h, element by element: x·a + b·PE.
TEST(Sinusoidal, EachScaleIsItsFormula) {
  tisa::config::ModelConfig c;
  c.embedding_size = 6;
  c.initializer_range = 0.05;
  c.position.absolute = false;
  c.position.relative = "sinusoidal";
  torch::manual_seed(1);
  auto x = torch::randn({2, 5, 6});
  auto pe = tisa::model::sinusoidal_table(5, 6).to(torch::kFloat);
  const struct {
    const char* scale;
    double embedding_factor, table_factor;
  } cases[] = {{"init", 1.0, 0.05 * std::sqrt(2.0)}, {"sqrt_e", std::sqrt(6.0), 1.0}, {"unit", 1.0, 1.0}};
  for (const auto& k : cases) {
    c.position.settings<tisa::model::SinusoidalSettings>().scale = k.scale;
    auto scheme = tisa::model::make_sinusoidal_scheme(c);
    auto got = scheme->add_to_embeddings(x);
    EXPECT_TRUE(torch::allclose(got, x * k.embedding_factor + pe * k.table_factor, 1e-6, 1e-7)) << k.scale;
  }
  c.position.settings<tisa::model::SinusoidalSettings>().scale = "vaswani";
  EXPECT_THROW(tisa::model::make_sinusoidal_scheme(c), std::exception);
  EXPECT_THROW(tisa::model::check_model_config(c), std::exception);
}

// Issue 37's cause: the share of the embedding LayerNorm's input power (mean square) that the
// position term holds at initialisation, at the cpu recipe's shape (V 4k, E 128, std 0.02, L 128).
// ALBERT's learned table holds 1/3 (word, token type and position embeddings all N(0, 0.02²)); the
// unit-amplitude table held 99.8 % (mean square 1/2 against 0.0008), drowning the word signal.
double position_share_at_init(bool absolute, const std::string& relative, const std::string& scale) {
  tisa::config::ModelConfig c;
  c.vocab_size = 4000;
  c.embedding_size = 128;
  c.hidden_size = 128;
  c.num_hidden_layers = 1;
  c.num_attention_heads = 2;
  c.intermediate_size = 256;
  c.position.absolute = absolute;
  c.position.relative = relative;
  c.position.settings<tisa::model::SinusoidalSettings>().scale = scale;
  torch::manual_seed(3);
  tisa::model::AlbertModel m(c);
  torch::NoGradGuard no_grad;
  auto ids = torch::randint(5, c.vocab_size, {8, 128});
  auto types = (torch::arange(128) >= 64).to(torch::kLong).expand({8, 128});
  auto& emb = *m->embeddings;
  auto words = emb.word_embeddings(ids) + emb.token_type_embeddings(types);  // without positions
  auto with_positions = words;
  if (emb.position_embeddings) with_positions = with_positions + emb.position_embeddings(128);
  if (auto* scheme = m->encoder->scheme_for(0, 0)) with_positions = scheme->add_to_embeddings(with_positions);
  const double positions = (with_positions - words).pow(2).mean().item<double>();
  return positions / with_positions.pow(2).mean().item<double>();
}

TEST(Sinusoidal, PositionsHoldTheLearnedTablesShareOfTheEmbeddingsAtInit) {
  const double learned = position_share_at_init(true, "none", "init");
  EXPECT_NEAR(learned, 1.0 / 3.0, 0.03) << "the learned table: one of three N(0, std^2) terms";
  const double sinusoidal = position_share_at_init(false, "sinusoidal", "init");
  EXPECT_NEAR(sinusoidal, learned, 0.05) << "default sinusoidal scale: the learned table's share";
  EXPECT_GT(position_share_at_init(false, "sinusoidal", "unit"), 0.99) << "the old convention: positions drown words";
  EXPECT_GT(position_share_at_init(false, "sinusoidal", "sqrt_e"), 0.75)
      << "Vaswani's sqrt(E) balances only embeddings of std E^-1/2, not ALBERT's 0.02";
}

}  // namespace
