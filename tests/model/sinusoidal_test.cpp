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
  auto out = m->forward(ids, {}, {}, {/*hidden_states=*/true, false});
  auto e = out.embedding_output[0];  // [10, 8]: rows differ only through the positions
  EXPECT_GT((e[0] - e[9]).abs().max().item<double>(), 1e-3);
  auto& emb = *m->embeddings;
  auto x = emb.word_embeddings(ids) + emb.token_type_embeddings(torch::zeros_like(ids));
  auto want = emb.LayerNorm(x + tisa::model::sinusoidal_table(10, 8).to(torch::kFloat));
  EXPECT_TRUE(torch::allclose(out.embedding_output, want, 1e-5, 1e-6));
}

}  // namespace
