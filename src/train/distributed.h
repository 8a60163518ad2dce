// Data-parallel training over N cooperating processes on PyTorch's own distributed engine (c10d):
// the process group comes from the standard environment (RANK, WORLD_SIZE, LOCAL_RANK,
// MASTER_ADDR, MASTER_PORT, as torchrun sets them; SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID as
// a fallback) through c10d's TCPStore, with ProcessGroupGloo on CPU and ProcessGroupNCCL on CUDA
// (when LibTorch was built with it). Every c10d call of the project lives in distributed.cpp; this
// header is torch-light.
//
// Rules of the data-parallel loop (README "Distributed training"):
//   - rank 0 broadcasts the initial parameters and buffers (broadcast_tensors);
//   - every rank reads its own shard of the examples (data::LoaderOptions rank/world_size);
//   - gradients are summed over ranks in flattened buckets (~25 MB) (GradientReducer), overlapped
//     with the backward pass when armed; the training loops normalise each loss by the counts of
//     the whole update (train/update_step.h), so the sum is the full-batch gradient; the
//     optimiser, its clipping and LAMB's trust ratios see it identically on every rank, and the
//     weights stay identical;
//   - metrics are reduced as sums (all_reduce_sum), only rank 0 (is_main()) writes logs,
//     metrics and checkpoints;
//   - global batch = batch_size × accumulation × world_size (see accumulation_for_world()).
// A collective that cannot complete (a rank died or hangs) throws tisa::Error within the timeout
// (env TISA_DIST_TIMEOUT, seconds, default 60), so no rank waits forever.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tisa::train {

// The process group's place, read from the environment.
struct DistEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::chrono::milliseconds timeout{60000};
  bool distributed() const { return world_size > 1; }
  // Reads RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT (SLURM_* as fallback) and
  // TISA_DIST_TIMEOUT. Throws tisa::Error naming the variable on a malformed or inconsistent
  // value (e.g. RANK >= WORLD_SIZE, WORLD_SIZE > 1 without MASTER_PORT).
  static DistEnv from_environment();
};

class Distributed {
 public:
  // A single process (world size 1): every collective is a no-op.
  Distributed();
  // Joins the process group described by `env` (blocks until all ranks have joined, at most the
  // timeout). `device` is the training device: CPU → Gloo; CUDA → NCCL when this LibTorch has it
  // (the device index should be env.local_rank), else Gloo on host copies.
  Distributed(const DistEnv& env, const c10::Device& device);
  ~Distributed();
  Distributed(const Distributed&) = delete;
  Distributed& operator=(const Distributed&) = delete;

  // From the environment: a single process when WORLD_SIZE is unset or 1.
  static std::unique_ptr<Distributed> from_environment(const c10::Device& device);

  int rank() const { return env_.rank; }
  int world_size() const { return env_.world_size; }
  int local_rank() const { return env_.local_rank; }
  bool enabled() const { return env_.world_size > 1; }
  bool is_main() const { return env_.rank == 0; }
  const DistEnv& env() const { return env_; }
  std::string backend_name() const;  // "gloo", "nccl" or "none"

  // Copies rank `root`'s values into every rank's tensors, in place (flattened in buckets).
  void broadcast_tensors(const std::vector<at::Tensor>& tensors, int root = 0);
  // Sums `values` over all ranks (float64); every rank gets the sums.
  std::vector<double> all_reduce_sum(const std::vector<double>& values);
  double all_reduce_sum(double value) { return all_reduce_sum(std::vector<double>{value})[0]; }
  // Largest value over ranks (e.g. to agree on a stop flag).
  double all_reduce_max(double value);
  // Throws tisa::Error on every rank when `fingerprint` (e.g. a hash of the resolved config)
  // differs between ranks, naming `what`. Called before the first broadcast: ranks that build
  // different models would otherwise fail inside the backend with an uncaught exception.
  void require_same_on_all_ranks(uint64_t fingerprint, const std::string& what);
  // Sums `tensor` over all ranks in place (any dtype/device the backend supports).
  void all_reduce_sum_(at::Tensor& tensor);
  // Waits until every rank has arrived.
  void barrier();
  // Rank 0 runs `fn` (e.g. preparing data into a shared folder) while the others wait for it
  // without a time limit as long as rank 0 is alive (polling the rendezvous store, so work
  // longer than the collective timeout is fine); when rank 0 fails or exits, the others throw.
  // A single process just runs `fn`.
  void main_first(const std::function<void()>& fn, const std::string& what);
  // Throws tisa::Error when `tensors` differ between ranks by more than `tolerance` (max abs);
  // a debugging check that data parallelism kept the replicas in step.
  void check_replicas_equal(const std::vector<at::Tensor>& tensors, double tolerance = 0.0);

  // Backend-level internals (distributed.cpp).
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  DistEnv env_;
  std::unique_ptr<Impl> impl_;
};

// The process group of this process for code that runs several trainings in one process (GLUE
// tasks and seeds): joined on first use from the environment with `device` (later calls return
// the same group); a single-process group when WORLD_SIZE is unset. Ranks > 0 log warnings only.
Distributed& process_group(const c10::Device& device);

// Averages (or sums, see GradientReduction) the gradients of `parameters` over the ranks in flattened buckets of about
// `bucket_bytes`. Two ways to use it, for one update of one or more micro-batches:
//   plain:    backward(s) ...; reducer.reduce();
//   overlap:  for each micro-batch: reducer.arm(is_last); backward; ... ; reducer.reduce();
// When armed for the last micro-batch, gradient hooks on the parameters copy each finished
// gradient into its bucket and launch the bucket's all-reduce while the backward pass continues;
// reduce() then only waits and writes the averages back into .grad(). Buckets are launched in a
// fixed order on every rank (reverse registration order, about the order backward finishes
// them); a bucket holding a parameter that gets no gradient in this backward is launched by
// reduce(), and so are the buckets after it. Such a parameter counts as zero on that rank
// and receives the average (so all ranks apply the same update). With one process reduce() is a
// no-op. Parameters sharing storage (tied weights) are handled once.
//
// kAverage divides the sums by the world size (each rank's gradient is the mean of its own
// share). kSum leaves the sums: the training loops normalise every loss by the counts of the
// whole update over all ranks (train/update_step.h), so each rank's gradient is already its
// share of the global mean and the sum is the full-batch gradient.
enum class GradientReduction { kAverage, kSum };

class GradientReducer {
 public:
  static constexpr int64_t kDefaultBucketBytes = 25 * 1024 * 1024;
  GradientReducer(Distributed& dist, const std::vector<at::Tensor>& parameters,
                  int64_t bucket_bytes = kDefaultBucketBytes,
                  GradientReduction reduction = GradientReduction::kAverage);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Call before each backward of an update; `last` = this backward completes the update's
  // gradient (only then do the hooks start the all-reduce).
  void arm(bool last);
  // After the last backward: averaged (summed) gradients in .grad() on every rank.
  void reduce();

  int64_t num_buckets() const;
  // Diagnostics: buckets whose all-reduce was started by a hook during the last backward.
  int64_t buckets_launched_early() const;

  struct State;

 private:
  Distributed& dist_;
  std::shared_ptr<State> state_;
};

// The device of this rank: cuda:(LOCAL_RANK mod visible devices) when `configured` is CUDA and
// the process is one of several, else `configured`.
c10::Device rank_device(const c10::Device& configured);

// Micro-batches per update for this world size: global batch = batch_size × accumulation ×
// world_size. `global_batch` (> 0) fixes it directly; otherwise the configured accumulation is
// kept. Throws tisa::Error naming the keys when the global batch is not a multiple of
// batch_size × world_size.
int64_t accumulation_for_world(int64_t global_batch, int64_t batch_size, int64_t accumulation, int world_size);

}  // namespace tisa::train
