// Padding, shuffling and length-grouping of tokenised GLUE examples (see glue_batches.h).
#include "glue/glue_batches.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/error.h"
#include "train/device_copy.h"

namespace tisa::glue {

GlueBatch make_glue_batch(const data::GlueEncodedSplit& split, const std::vector<size_t>& rows, int64_t pad_id,
                          c10::Device device) {
  TISA_CHECK(!rows.empty(), "empty GLUE batch");
  const int64_t b = static_cast<int64_t>(rows.size());
  int64_t len = 1;
  for (size_t r : rows) len = std::max(len, split.length(r));
  auto ids = torch::full({b, len}, pad_id, torch::kInt64);      // [B, L]
  auto types = torch::zeros({b, len}, torch::kInt64);          // [B, L]
  auto mask = torch::zeros({b, len}, torch::kInt64);           // [B, L]
  auto* pi = ids.data_ptr<int64_t>();
  auto* pt = types.data_ptr<int64_t>();
  auto* pm = mask.data_ptr<int64_t>();
  bool labelled = split.has_labels;
  for (int64_t i = 0; i < b; ++i) {
    size_t r = rows[i];
    const int32_t* src = split.ids(r);
    const uint8_t* ty = split.types(r);
    for (int64_t j = 0, n = split.length(r); j < n; ++j) {
      pi[i * len + j] = src[j];
      pt[i * len + j] = ty[j];
      pm[i * len + j] = 1;
    }
    if (std::isnan(split.labels[r])) labelled = false;
  }
  GlueBatch out;
  out.rows = rows;
  out.input_ids = train::host_to_device(ids, device);
  out.token_type_ids = train::host_to_device(types, device);
  out.attention_mask = train::host_to_device(mask, device);
  if (labelled) {
    if (split.regression) {
      auto l = torch::empty({b}, torch::kFloat32);
      for (int64_t i = 0; i < b; ++i) l[i] = split.labels[rows[i]];
      out.labels = train::host_to_device(l, device);
    } else {
      auto l = torch::empty({b}, torch::kInt64);
      auto* pl = l.data_ptr<int64_t>();
      for (int64_t i = 0; i < b; ++i) pl[i] = static_cast<int64_t>(split.labels[rows[i]]);
      out.labels = train::host_to_device(l, device);
    }
  }
  return out;
}

GlueSampler::GlueSampler(size_t examples, uint64_t seed) : order_(examples), seed_(seed), rng_(seed) {
  if (examples == 0) throw Error("the training split has no examples");
  std::iota(order_.begin(), order_.end(), size_t{0});
  reshuffle();
}

GlueSampler::GlueSampler(size_t examples, uint64_t seed, std::vector<int64_t> lengths, size_t group_window)
    : order_(examples), seed_(seed), rng_(seed), lengths_(std::move(lengths)), group_window_(group_window) {
  if (examples == 0) throw Error("the training split has no examples");
  TISA_CHECK(lengths_.size() == examples, "one length per training example expected");
  TISA_CHECK(group_window_ > 0, "length grouping needs a window of at least one example");
  std::iota(order_.begin(), order_.end(), size_t{0});
  reshuffle();
}

void GlueSampler::reshuffle() {
  std::shuffle(order_.begin(), order_.end(), rng_);
  pos_ = 0;
  if (lengths_.empty()) return;
  for (size_t begin = 0; begin < order_.size(); begin += group_window_) {
    const auto end = order_.begin() + static_cast<std::ptrdiff_t>(std::min(order_.size(), begin + group_window_));
    std::stable_sort(order_.begin() + static_cast<std::ptrdiff_t>(begin), end,
                     [&](size_t a, size_t b) { return lengths_[a] > lengths_[b]; });
  }
}

std::vector<size_t> GlueSampler::next(int64_t batch_size) {
  std::vector<size_t> rows;
  rows.reserve(static_cast<size_t>(batch_size));
  while (static_cast<int64_t>(rows.size()) < batch_size) {
    if (pos_ == order_.size()) {
      ++epoch_;
      reshuffle();
    }
    rows.push_back(order_[pos_++]);
  }
  return rows;
}

nlohmann::json GlueSampler::position() const { return {{"epoch", epoch_}, {"index", pos_}}; }

void GlueSampler::seek(const nlohmann::json& position) {
  int64_t epoch = 0, index = 0;
  try {
    epoch = position.at("epoch").get<int64_t>();
    index = position.at("index").get<int64_t>();
  } catch (const std::exception& e) {
    throw Error("GLUE sampler position " + position.dump() + ": expected {\"epoch\", \"index\"} (" + e.what() + ")");
  }
  if (epoch < 0 || index < 0 || index > static_cast<int64_t>(order_.size()))
    throw Error("GLUE sampler position " + position.dump() + " lies outside the " + std::to_string(order_.size()) +
                " training examples");
  // Replay the permutations from the seed: epoch e's order is the (e+1)-th shuffle.
  rng_.seed(seed_);
  std::iota(order_.begin(), order_.end(), size_t{0});
  reshuffle();
  for (epoch_ = 0; epoch_ < epoch; ++epoch_) reshuffle();
  pos_ = static_cast<size_t>(index);
}

std::vector<std::vector<size_t>> eval_batches(const data::GlueEncodedSplit& split, int64_t batch_size) {
  std::vector<size_t> order(split.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return split.length(a) < split.length(b); });
  std::vector<std::vector<size_t>> out;
  for (size_t i = 0; i < order.size(); i += static_cast<size_t>(batch_size))
    out.emplace_back(order.begin() + i, order.begin() + std::min(order.size(), i + static_cast<size_t>(batch_size)));
  return out;
}

}  // namespace tisa::glue
