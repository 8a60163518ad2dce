// Data parallelism in the pretraining run; see data_parallel.h.
#include "train/data_parallel.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/fs.h"
#include "train/distributed.h"

namespace tisa::train {

void write_data_parallel_record(const std::string& checkpoint_dir, const DataParallelRecord& r) {
  nlohmann::json j = {{"world_size", r.world_size},
                      {"batch_size", r.batch_size},
                      {"accumulation", r.accumulation},
                      {"global_batch", r.global_batch()}};
  fs::write_file_atomic(checkpoint_dir + "/" + kDataParallelFile, j.dump(2) + "\n");
}

DataParallelRecord read_data_parallel_record(const std::string& checkpoint_dir) {
  const std::string path = checkpoint_dir + "/" + kDataParallelFile;
  DataParallelRecord r;
  if (!fs::exists(path)) {
    r.world_size = 0;
    return r;
  }
  try {
    auto j = nlohmann::json::parse(fs::read_file(path));
    r.world_size = j.at("world_size").get<int64_t>();
    r.batch_size = j.at("batch_size").get<int64_t>();
    r.accumulation = j.at("accumulation").get<int64_t>();
  } catch (const std::exception& e) {
    throw Error(path + ": malformed (" + e.what() + "); expected world_size, batch_size, accumulation");
  }
  if (r.world_size < 1 || r.batch_size < 1 || r.accumulation < 1)
    throw Error(path + ": world_size, batch_size and accumulation must be positive");
  return r;
}

namespace {

// `applied` follows the (identical) reduced gradient norm; a disagreement would mean the replicas
// diverged, which the weights would show anyway.
void warn_if_ranks_disagree(double skipped, int world) {
  if (skipped > 0 && skipped < world)
    spdlog::warn("[dist] ranks disagree whether update was applied ({} of {} skipped)", skipped, world);
}

}  // namespace

int64_t resolve_accumulation(const config::TrainingConfig& t, int world_size, const std::string& resume_dir) {
  if (t.global_batch > 0) return accumulation_for_world(t.global_batch, t.batch_size, t.accumulation, world_size);
  if (!resume_dir.empty()) {
    const DataParallelRecord saved = read_data_parallel_record(resume_dir);
    if (saved.world_size > 0 && (saved.world_size != world_size || saved.batch_size != t.batch_size)) {
      const int64_t acc = accumulation_for_world(saved.global_batch(), t.batch_size, t.accumulation, world_size);
      spdlog::info("[dist] resume with {} process(es) × batch {} (checkpoint: {} × {} × accumulation {}): "
                   "accumulation {} keeps the global batch of {}",
                   world_size, t.batch_size, saved.world_size, saved.batch_size, saved.accumulation, acc,
                   saved.global_batch());
      return acc;
    }
  }
  return accumulation_for_world(0, t.batch_size, t.accumulation, world_size);
}

bool reduce_update_result(Distributed& dist, UpdateResult& r, bool stop_requested) {
  if (!dist.enabled()) return stop_requested;
  std::vector<double> v = {r.loss, stop_requested ? 1.0 : 0.0, r.applied ? 0.0 : 1.0, static_cast<double>(r.tokens)};
  v.insert(v.end(), r.terms.begin(), r.terms.end());
  auto s = dist.all_reduce_sum(v);
  // Each rank holds its share of the update's means (update_step.h): the sums are the means.
  r.loss = s[0];
  r.tokens = static_cast<int64_t>(s[3] + 0.5);
  r.terms.assign(s.begin() + 4, s.end());
  warn_if_ranks_disagree(s[2], dist.world_size());
  return s[1] > 0;
}

EvalResult reduce_eval_result(Distributed& dist, const EvalResult& e) {
  if (!dist.enabled()) return e;
  const double p = static_cast<double>(e.predictions), n = static_cast<double>(e.examples);
  auto s = dist.all_reduce_sum({e.mlm_loss * p, e.mlm_accuracy * p, e.sop_loss * n, e.sop_accuracy * n, p, n,
                                static_cast<double>(e.batches)});
  EvalResult r;
  r.predictions = static_cast<int64_t>(s[4] + 0.5);
  r.examples = static_cast<int64_t>(s[5] + 0.5);
  r.batches = static_cast<int64_t>(s[6] + 0.5);
  if (r.predictions > 0) {
    r.mlm_loss = s[0] / s[4];
    r.mlm_accuracy = s[1] / s[4];
  }
  if (r.examples > 0) {
    r.sop_loss = s[2] / s[5];
    r.sop_accuracy = s[3] / s[5];
  }
  return r;
}

}  // namespace tisa::train
