// Background batch building for pretraining (see the header for the position/sharding rules).
#include "data/pretrain_loader.h"

#include <algorithm>

#include "common/error.h"

namespace tisa::data {

DataPosition DataPosition::from_json(const nlohmann::json& j) {
  try {
    DataPosition p;
    p.epoch = j.at("epoch").get<int64_t>();
    p.index = j.at("index").get<int64_t>();
    if (p.epoch < 0 || p.index < 0) throw Error("negative value");
    return p;
  } catch (const std::exception& e) {
    throw Error("data position: expected {\"epoch\": int >= 0, \"index\": int >= 0}, got " + j.dump() +
                " (" + e.what() + ")");
  }
}

PretrainBatch collate(const std::vector<PretrainExample>& examples, int32_t pad_id, int64_t pad_to) {
  PretrainBatch b;
  b.batch_size = static_cast<int64_t>(examples.size());
  int64_t longest = 0;
  for (const auto& e : examples) longest = std::max(longest, e.length());
  if (pad_to > 0 && pad_to < longest)
    throw Error("collate: pad_to " + std::to_string(pad_to) + " is shorter than an example (" +
                std::to_string(longest) + ")");
  const int64_t L = pad_to > 0 ? pad_to : longest;
  b.seq_len = L;
  const size_t n = static_cast<size_t>(b.batch_size * L);
  b.input_ids.assign(n, pad_id);
  b.token_type_ids.assign(n, 0);
  b.attention_mask.assign(n, 0);
  b.lengths.reserve(examples.size());
  b.sop_labels.reserve(examples.size());
  for (size_t r = 0; r < examples.size(); ++r) {
    const PretrainExample& e = examples[r];
    const int64_t base = static_cast<int64_t>(r) * L;
    for (int64_t i = 0; i < e.length(); ++i) {
      b.input_ids[base + i] = e.input_ids[i];
      b.token_type_ids[base + i] = e.token_type_ids[i];
      b.attention_mask[base + i] = 1;
    }
    for (size_t k = 0; k < e.masked_positions.size(); ++k) {
      b.masked_positions.push_back(base + e.masked_positions[k]);
      b.masked_labels.push_back(e.masked_labels[k]);
    }
    b.lengths.push_back(e.length());
    b.sop_labels.push_back(e.sop_label);
    b.num_tokens += e.length();
  }
  return b;
}

PretrainBatchLoader::PretrainBatchLoader(std::shared_ptr<const ExampleBuilder> builder, LoaderOptions options,
                                         DataPosition start)
    : builder_(std::move(builder)), options_(options) {
  if (options_.batch_size < 1) throw Error("loader: batch_size must be at least 1");
  if (options_.world_size < 1 || options_.rank < 0 || options_.rank >= options_.world_size)
    throw Error("loader: rank " + std::to_string(options_.rank) + " outside world_size " +
                std::to_string(options_.world_size));
  if (options_.workers < 0) throw Error("data.workers must be >= 0");
  options_.prefetch_batches = std::max<int64_t>(1, options_.prefetch_batches);
  const int32_t pad = builder_->special_ids().pad;
  pad_id_ = pad >= 0 ? pad : 0;
  seek(start);
}

PretrainBatchLoader::~PretrainBatchLoader() { stop_workers(); }

DataPosition PretrainBatchLoader::position() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return consumer_pos_;
}

void PretrainBatchLoader::seek(DataPosition position) {
  if (position.epoch < 0 || position.index < 0) throw Error("loader: negative data position");
  stop_workers();
  std::lock_guard<std::mutex> lock(mutex_);
  consumer_pos_ = assign_pos_ = position;
  assign_exhausted_ = false;
  next_assign_seq_ = next_consume_seq_ = 0;
  ready_.clear();
  error_ = nullptr;
  stop_ = false;
  for (int64_t i = 0; i < options_.workers; ++i) threads_.emplace_back([this] { worker_loop(); });
}

void PretrainBatchLoader::stop_workers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_work_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

bool PretrainBatchLoader::plan_job(Job& job) {
  const int64_t W = options_.world_size;
  DataPosition pos = assign_pos_;
  job.slots.clear();
  job.start = pos;
  while (static_cast<int64_t>(job.slots.size()) < options_.batch_size) {
    const int64_t n = builder_->num_examples(pos.epoch);
    // Training (loop) keeps the ranks in step: every rank takes the same number of examples, so
    // the last n mod W of an epoch are left out. Evaluation takes every example exactly once: the
    // first n mod W ranks get one more, so results do not depend on the process count.
    const int64_t usable = options_.loop ? n - n % W : n;
    if (usable == 0)
      throw Error("pretraining data: split '" + builder_->split().name() + "' yields " + std::to_string(n) +
                  " examples in epoch " + std::to_string(pos.epoch) + ", fewer than world_size " +
                  std::to_string(W) + " (or none): use more text or a smaller max_seq_length");
    if (pos.index >= usable) {
      if (!options_.loop) break;
      pos = DataPosition{pos.epoch + 1, 0};
      continue;
    }
    if (pos.index + options_.rank < n) job.slots.emplace_back(pos.epoch, pos.index + options_.rank);
    pos.index += W;
  }
  job.end = pos;
  assign_pos_ = pos;
  return !job.slots.empty();
}

PretrainBatch PretrainBatchLoader::run_job(const Job& job) const {
  std::vector<PretrainExample> examples;
  examples.reserve(job.slots.size());
  std::shared_ptr<const EpochPlan> plan;
  for (auto [epoch, index] : job.slots) {
    if (!plan || plan->epoch != epoch) plan = builder_->plan(epoch);
    examples.push_back(builder_->build(*plan, index));
  }
  PretrainBatch b = collate(examples, pad_id_, options_.pad_to_max_length ? builder_->options().max_seq_length : 0);
  b.position = job.start;
  b.next_position = job.end;
  return b;
}

void PretrainBatchLoader::worker_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    cv_work_.wait(lock, [&] {
      return stop_ || (!assign_exhausted_ && !error_ && next_assign_seq_ < next_consume_seq_ + options_.prefetch_batches);
    });
    if (stop_) return;
    Job job;
    int64_t seq = 0;
    try {
      if (!plan_job(job)) {
        assign_exhausted_ = true;
        cv_done_.notify_all();
        continue;
      }
      seq = next_assign_seq_++;
      lock.unlock();
      PretrainBatch batch = run_job(job);
      lock.lock();
      ready_.emplace(seq, std::move(batch));
    } catch (...) {
      if (!lock.owns_lock()) lock.lock();
      if (!error_) error_ = std::current_exception();
    }
    cv_done_.notify_all();
  }
}

bool PretrainBatchLoader::next(PretrainBatch& batch) {
  if (options_.workers == 0) {
    Job job;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!plan_job(job)) return false;
    }
    batch = run_job(job);
    std::lock_guard<std::mutex> lock(mutex_);
    consumer_pos_ = batch.next_position;
    return true;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  cv_done_.wait(lock, [&] {
    return error_ || ready_.count(next_consume_seq_) || (assign_exhausted_ && next_consume_seq_ >= next_assign_seq_);
  });
  auto it = ready_.find(next_consume_seq_);
  if (it == ready_.end()) {
    if (error_) std::rethrow_exception(error_);
    return false;
  }
  batch = std::move(it->second);
  ready_.erase(it);
  ++next_consume_seq_;
  consumer_pos_ = batch.next_position;
  lock.unlock();
  cv_work_.notify_all();
  return true;
}

}  // namespace tisa::data
