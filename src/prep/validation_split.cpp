// Validation documents by share of text (see validation_split.h).
#include "prep/validation_split.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "data/counter_rng.h"

namespace tisa::prep {

std::vector<uint8_t> choose_validation_documents(const std::vector<int64_t>& sizes, double fraction, uint64_t seed) {
  const size_t n = sizes.size();
  std::vector<uint8_t> held_out(n, 0);
  if (!(fraction > 0) || n < 2) return held_out;
  const int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  const auto budget = static_cast<int64_t>(fraction * static_cast<double>(total));

  std::vector<std::pair<uint64_t, size_t>> order(n);
  for (size_t d = 0; d < n; ++d)
    order[d] = {data::CounterRng({seed, static_cast<uint64_t>(data::RngStream::kSplit), static_cast<uint64_t>(d)})
                    .next_u64(),
                d};
  std::sort(order.begin(), order.end());

  int64_t used = 0;
  size_t count = 0;
  for (const auto& [key, d] : order) {
    if (count + 1 >= n) break;  // keep a training document
    if (sizes[d] <= 0 || used + sizes[d] > budget) continue;  // empty documents hold nothing to evaluate
    held_out[d] = 1;
    used += sizes[d];
    ++count;
  }
  if (count == 0) {
    // Every document exceeds the budget: hold out the smallest (the first in key order on ties).
    size_t smallest = order.front().second;
    for (const auto& [key, d] : order)
      if (sizes[d] < sizes[smallest]) smallest = d;
    held_out[smallest] = 1;
  }
  return held_out;
}

}  // namespace tisa::prep
