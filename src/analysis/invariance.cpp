// Translation-invariance measures (SPEC §9), in float64.
//
// Diagonal sums use a "skew" of the matrix (flip columns, pad, re-stride) so that each diagonal
// becomes one column: only flip/pad/reshape/sum/index_select, which are deterministic on every
// device (index_add_/scatter_add_ would refuse to run on CUDA under deterministic algorithms).
#include "analysis/invariance.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "common/error.h"

namespace tisa::analysis {
namespace {

std::string shape_of(const at::Tensor& t) {
  if (!t.defined()) return "undefined";
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "]";
}

void check_square(const at::Tensor& a, const char* what) {
  if (!a.defined() || a.dim() < 2 || a.size(-1) != a.size(-2) || a.size(-1) == 0)
    throw Error(std::string(what) + ": expected a square matrix [..., n, n], got " + shape_of(a));
}

// Sums of the diagonals of a [..., n, n] (float64), indexed by r + n − 1 for r = j − i: [..., 2n−1].
at::Tensor diagonal_sums(const at::Tensor& a) {
  int64_t n = a.size(-1);
  auto lead = a.sizes().slice(0, a.dim() - 2).vec();
  at::Tensor x = a.reshape({-1, n, n}).flip({-1});                    // x[b, i, j'] = a[b, i, n−1−j']
  at::Tensor padded = torch::constant_pad_nd(x, {0, n});              // [B, n, 2n]
  int64_t batch = padded.size(0);
  // Row i of the re-strided view holds x[i, c − i] in column c, zeros elsewhere.
  at::Tensor skewed = padded.reshape({batch, 2 * n * n}).narrow(1, 0, 2 * n * n - n).reshape({batch, n, 2 * n - 1});
  // Column c collects x[i, c − i] = a[i, j] with j − i = n − 1 − c; flip to index by r + n − 1.
  at::Tensor sums = skewed.sum(1).flip({-1});                         // [B, 2n−1]
  lead.push_back(2 * n - 1);
  return sums.reshape(lead);
}

// Index matrix idx[i, j] = j − i + n − 1, flattened: [n·n] int64 on `device`.
at::Tensor offset_index(int64_t n, const c10::Device& device) {
  auto opts = torch::TensorOptions().dtype(torch::kLong).device(device);
  at::Tensor i = torch::arange(n, opts).unsqueeze(1);
  at::Tensor j = torch::arange(n, opts).unsqueeze(0);
  return (j - i + (n - 1)).reshape({-1});
}

// Diagonal lengths n − |r| for r = −(n−1)..n−1: [2n−1] float64.
at::Tensor diagonal_counts(int64_t n, const c10::Device& device) {
  auto opts = torch::TensorOptions().dtype(torch::kDouble).device(device);
  return static_cast<double>(n) - torch::arange(-(n - 1), n, opts).abs();
}

// τ for each matrix of a [..., n, n] batch, flattened to a vector.
std::vector<double> tau_batch(const at::Tensor& a_in) {
  at::Tensor a = a_in.to(torch::kDouble);
  int64_t n = a.size(-1);
  at::Tensor x = a.reshape({-1, n, n});                               // [B, n, n]
  at::Tensor t = toeplitz_projection(x);
  at::Tensor residual = (x - t).pow(2).sum({1, 2});                   // [B]
  at::Tensor centred = (x - x.mean({1, 2}, /*keepdim=*/true)).pow(2).sum({1, 2});
  at::Tensor scale = x.pow(2).sum({1, 2});
  at::Tensor stats = torch::stack({residual, centred, scale}, 1).cpu();  // one device→host copy
  auto acc = stats.accessor<double, 2>();
  std::vector<double> taus;
  for (int64_t b = 0; b < stats.size(0); ++b) {
    double num = acc[b][0], den = acc[b][1], total = acc[b][2];
    // Constant up to rounding (variance ≤ 1e-24 of the squared norm, i.e. relative spread below
    // ~1e-12): Toeplitz, τ = 1 (ours, SPEC §9 leaves 0/0 open).
    if (!(den > 1e-24 * total) || den == 0) {
      taus.push_back(1.0);
      continue;
    }
    double tau = 1.0 - num / den;
    taus.push_back(std::min(1.0, std::max(0.0, tau)));  // T contains the constants: num ≤ den
  }
  return taus;
}

at::Tensor as_double(const at::Tensor& t) { return t.defined() ? t.detach().to(torch::kDouble) : t; }

at::Tensor linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  at::Tensor y = x.matmul(w.t());
  return b.defined() ? y + b : y;
}

void check_linear(const at::Tensor& w, const at::Tensor& b, int64_t in, const char* what) {
  if (!w.defined() || w.dim() != 2 || w.size(1) != in)
    throw Error(std::string(what) + ".weight: expected [out, " + std::to_string(in) + "], got " + shape_of(w));
  if (b.defined() && (b.dim() != 1 || b.size(0) != w.size(0)))
    throw Error(std::string(what) + ".bias: expected [" + std::to_string(w.size(0)) + "], got " + shape_of(b));
}

}  // namespace

at::Tensor diagonal_means(const at::Tensor& a) {
  check_square(a, "diagonal_means");
  at::Tensor x = a.detach().to(torch::kDouble);
  return diagonal_sums(x) / diagonal_counts(x.size(-1), x.device());
}

at::Tensor toeplitz_projection(const at::Tensor& a) {
  check_square(a, "toeplitz_projection");
  torch::NoGradGuard no_grad;
  at::Tensor x = a.detach().to(torch::kDouble);
  int64_t n = x.size(-1);
  at::Tensor means = diagonal_sums(x) / diagonal_counts(n, x.device());  // [..., 2n−1]
  return means.index_select(-1, offset_index(n, x.device())).reshape(x.sizes());  // [..., n, n]
}

double translation_invariance(const at::Tensor& a) {
  if (!a.defined() || a.dim() != 2) throw Error("translation_invariance: expected a matrix [n, n], got " + shape_of(a));
  check_square(a, "translation_invariance");
  torch::NoGradGuard no_grad;
  return tau_batch(a.detach())[0];
}

at::Tensor position_gram(const at::Tensor& position_table, int64_t n) {
  if (!position_table.defined() || position_table.dim() != 2)
    throw Error("position table: expected [positions, E], got " + shape_of(position_table));
  if (n <= 0 || n > position_table.size(0))
    throw Error("position analysis: n = " + std::to_string(n) + " positions requested but the table has " +
                std::to_string(position_table.size(0)) + " rows");
  torch::NoGradGuard no_grad;
  at::Tensor p = as_double(position_table).narrow(0, 0, n);  // [n, E]
  return p.matmul(p.t());                                     // [n, n]
}

at::Tensor head_position_logits(const at::Tensor& position_table, const at::Tensor& mapping_w,
                                const at::Tensor& mapping_b, const at::Tensor& q_w, const at::Tensor& q_b,
                                const at::Tensor& k_w, const at::Tensor& k_b, int64_t heads, int64_t n) {
  if (!position_table.defined() || position_table.dim() != 2)
    throw Error("position table: expected [positions, E], got " + shape_of(position_table));
  if (n <= 0 || n > position_table.size(0))
    throw Error("position analysis: n = " + std::to_string(n) + " positions requested but the table has " +
                std::to_string(position_table.size(0)) + " rows");
  torch::NoGradGuard no_grad;
  at::Tensor m = as_double(position_table).narrow(0, 0, n);  // [n, E]
  if (mapping_w.defined()) {
    check_linear(mapping_w, mapping_b, m.size(1), "embedding mapping");
    m = linear(m, as_double(mapping_w), as_double(mapping_b));  // [n, H]
  }
  int64_t hidden = m.size(1);
  check_linear(q_w, q_b, hidden, "query");
  check_linear(k_w, k_b, hidden, "key");
  if (heads <= 0 || q_w.size(0) % heads != 0 || k_w.size(0) != q_w.size(0))
    throw Error("attention: " + std::to_string(q_w.size(0)) + " query outputs, " + std::to_string(k_w.size(0)) +
                " key outputs and " + std::to_string(heads) + " heads do not fit");
  int64_t d = q_w.size(0) / heads;
  at::Tensor q = linear(m, as_double(q_w), as_double(q_b)).view({n, heads, d}).permute({1, 0, 2});  // [heads, n, d]
  at::Tensor k = linear(m, as_double(k_w), as_double(k_b)).view({n, heads, d}).permute({1, 0, 2});  // [heads, n, d]
  return q.matmul(k.transpose(1, 2)) / std::sqrt(static_cast<double>(d));                         // [heads, n, n]
}

InvarianceSummary position_invariance(const at::Tensor& position_table, const at::Tensor& mapping_w,
                                      const at::Tensor& mapping_b, const at::Tensor& q_w, const at::Tensor& q_b,
                                      const at::Tensor& k_w, const at::Tensor& k_b, int64_t heads, int64_t n) {
  torch::NoGradGuard no_grad;
  InvarianceSummary s;
  s.tau_gram = tau_batch(position_gram(position_table, n))[0];
  s.tau_heads = tau_batch(head_position_logits(position_table, mapping_w, mapping_b, q_w, q_b, k_w, k_b, heads, n));
  double total = 0;
  for (double t : s.tau_heads) total += t;
  s.tau_heads_mean = s.tau_heads.empty() ? 0.0 : total / static_cast<double>(s.tau_heads.size());
  return s;
}

std::optional<InvarianceSummary> model_position_invariance(const torch::nn::Module& model, int64_t heads, int64_t n) {
  auto params = model.named_parameters(/*recurse=*/true);
  auto find = [&](const std::string& name) -> at::Tensor {
    for (const char* prefix : {"albert.", ""})
      if (const at::Tensor* t = params.find(prefix + name)) return *t;
    return {};
  };
  at::Tensor table = find("embeddings.position_embeddings.weight");
  if (!table.defined()) return std::nullopt;
  const std::string layer = "encoder.albert_layer_groups.0.albert_layers.0.attention.";
  at::Tensor q_w = find(layer + "query.weight"), k_w = find(layer + "key.weight");
  if (!q_w.defined() || !k_w.defined())
    throw Error("position_invariance: the model has a position table but no " + layer + "{query,key}.weight");
  return position_invariance(table, find("encoder.embedding_hidden_mapping_in.weight"),
                             find("encoder.embedding_hidden_mapping_in.bias"), q_w, find(layer + "query.bias"), k_w,
                             find(layer + "key.bias"), heads, std::min(n, table.size(0)));
}

nlohmann::json to_json(const InvarianceSummary& summary) {
  return {{"tau_gram", summary.tau_gram}, {"tau_heads_mean", summary.tau_heads_mean}, {"tau_heads", summary.tau_heads}};
}

}  // namespace tisa::analysis
