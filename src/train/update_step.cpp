// One optimiser update normalised by the counts of the whole update; see update_step.h.
#include "train/update_step.h"

#include <cmath>

#include "common/error.h"
#include "train/distributed.h"

namespace tisa::train {

std::vector<double> global_counts(Distributed* dist, const std::vector<std::vector<double>>& counts) {
  TISA_CHECK(!counts.empty(), "an update needs at least one micro-batch");
  std::vector<double> total(counts.front().size(), 0.0);
  for (const auto& c : counts) {
    TISA_CHECK(c.size() == total.size(), "every micro-batch needs a count for every loss term");
    for (size_t k = 0; k < c.size(); ++k) total[k] += c[k];
  }
  return dist ? dist->all_reduce_sum(total) : total;  // [dist] one collective per update
}

UpdateResult UpdateStep::operator()(const std::vector<std::vector<double>>& counts, const Forward& forward,
                                    int64_t updates_done) {
  const std::vector<double> total = global_counts(dist, counts);
  const size_t n_terms = total.size();
  std::vector<torch::Tensor> term_sums(n_terms);
  torch::Tensor loss_sum;
  optimizer_.zero_grad();
  for (size_t i = 0; i < counts.size(); ++i) {
    std::vector<torch::Tensor> sums = forward(i);
    TISA_CHECK(sums.size() == n_terms, "forward returned another number of loss terms than counted");
    torch::Tensor loss;
    for (size_t k = 0; k < n_terms; ++k) {
      // A term without items anywhere in the update (e.g. no masked token) contributes nothing.
      torch::Tensor part = total[k] > 0 ? sums[k] / total[k] : sums[k] * 0.0;
      loss = loss.defined() ? loss + part : part;
      term_sums[k] = term_sums[k].defined() ? term_sums[k] + part.detach() : part.detach();
    }
    if (loss_hook) loss_hook(updates_done, loss);
    if (reducer) reducer->arm(i + 1 == counts.size());  // [dist] all-reduce during the last backward
    loss.backward();  // accumulates this micro-batch's share of the update's mean gradient
    loss_sum = loss_sum.defined() ? loss_sum + loss.detach() : loss.detach();
  }
  if (reducer) reducer->reduce();  // [dist] summed shares = the gradient of the whole update
  torch::Tensor grad_norm = optimizer_.clip_grad_norm(clip_norm_);  // measures, and clips when > 0
  UpdateResult r;
  std::vector<torch::Tensor> host_parts{loss_sum.to(torch::kDouble).reshape({1}), grad_norm.to(torch::kDouble).reshape({1})};
  for (auto& t : term_sums) host_parts.push_back(t.to(torch::kDouble).reshape({1}));
  auto host = torch::cat(host_parts).to(torch::kCPU);  // the one host sync of the update
  const double* h = host.data_ptr<double>();
  r.loss = h[0];
  r.grad_norm = h[1];
  r.terms.assign(h + 2, h + 2 + n_terms);
  r.lr = schedule_.lr_at(updates_done);
  // A NaN/Inf loss or gradient would poison the weights and the moments: skip the update.
  r.applied = std::isfinite(r.loss) && std::isfinite(r.grad_norm);
  if (r.applied) optimizer_.step(r.lr);
  optimizer_.zero_grad();  // free the gradients as soon as they are used
  return r;
}

}  // namespace tisa::train
