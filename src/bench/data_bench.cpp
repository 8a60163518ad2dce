// Data-pipeline throughput: example building (segmentation, SOP, whole-word n-gram masking) and
// batching through the PretrainBatchLoader of src/data, on a prepared dataset or on a synthetic
// one written to a temporary folder; see bench.h.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>

#include "bench/bench.h"
#include "common/error.h"
#include "data/pretrain_dataset.h"
#include "data/pretrain_examples.h"
#include "data/pretrain_loader.h"

namespace tisa::bench {
namespace {

// Writes a synthetic dataset: `documents` documents of 8..40 sentences of 5..45 tokens, Zipf-like
// ids over a 30000 vocabulary (ids 0..4 special), ~75% of the tokens starting a word.
void write_synthetic(const std::string& dir, int64_t documents, uint64_t seed) {
  data::DatasetTokenizerInfo info;
  info.identity = "synthetic-bench";
  info.type = "sentencepiece";
  info.vocab_size = 30000;
  info.special_ids = {0, 1, 2, 3, 4};
  data::PretrainDatasetWriter writer(dir, info, {{"by", "tisa-train bench --data (synthetic)"}});
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> n_sent(8, 40), n_tok(5, 45);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double log_v = std::log(30000.0 - 5.0);
  for (int64_t d = 0; d < documents; ++d) {
    data::DocumentTokens doc(n_sent(rng));
    for (auto& s : doc) {
      const int n = n_tok(rng);
      for (int i = 0; i < n; ++i) {
        s.ids.push_back(5 + static_cast<int32_t>(std::exp(u(rng) * log_v)) - 1);
        s.word_start.push_back(i == 0 || u(rng) < 0.75);
      }
    }
    writer.add_document(d % 50 == 49 ? "valid" : "train", doc);
  }
  writer.finish();
}

}  // namespace

nlohmann::json DataBenchResult::to_json() const {
  return {{"source", source}, {"batch", spec.batch}, {"seq", spec.seq}, {"workers", spec.workers},
          {"batches", spec.batches}, {"seconds", seconds.to_json()}, {"examples_per_s", examples_per_s},
          {"tokens_per_s", tokens_per_s}};
}

DataBenchResult run_data_bench(const DataBenchSpec& spec) {
  if (spec.batch < 1 || spec.seq < 8 || spec.batches < 1 || spec.reps < 1 || spec.workers < 0)
    throw Error("bench --data: batch >= 1, seq >= 8, batches >= 1, reps >= 1, workers >= 0 required");
  DataBenchResult r;
  r.spec = spec;
  std::string dir = spec.dataset;
  std::string temp;
  if (dir.empty()) {
    temp = (std::filesystem::temp_directory_path() / ("tisa-bench-data-" + std::to_string(::getpid()))).string();
    std::filesystem::remove_all(temp);
    write_synthetic(temp, 2000, spec.seed);
    dir = temp;
    r.source = "synthetic";
  } else {
    r.source = dir;
  }
  try {
    auto dataset = std::make_shared<const data::PretrainDataset>(dir);
    data::ExampleOptions eo;
    eo.max_seq_length = spec.seq;
    eo.seed = spec.seed;
    auto builder = std::make_shared<const data::ExampleBuilder>(dataset, "train", eo);
    data::LoaderOptions lo;
    lo.batch_size = spec.batch;
    lo.workers = spec.workers;
    lo.pad_to_max_length = true;
    data::PretrainBatchLoader loader(builder, lo);
    data::PretrainBatch batch;
    for (int i = 0; i < 10; ++i) loader.next(batch);  // warm-up: epoch plan, worker start
    std::vector<double> times;
    int64_t tokens = 0, examples = 0;
    for (int rep = 0; rep < spec.reps; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      for (int64_t i = 0; i < spec.batches; ++i) {
        if (!loader.next(batch)) throw Error("bench --data: loader ran out of data");
        if (rep == 0) {
          tokens += batch.num_tokens;
          examples += batch.batch_size;
        }
      }
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    r.seconds = Spread::of(times);
    r.examples_per_s = static_cast<double>(examples) / r.seconds.median;
    r.tokens_per_s = static_cast<double>(tokens) / r.seconds.median;
  } catch (...) {
    if (!temp.empty()) std::filesystem::remove_all(temp);
    throw;
  }
  if (!temp.empty()) std::filesystem::remove_all(temp);
  return r;
}

}  // namespace tisa::bench
