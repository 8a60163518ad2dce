// Data-parallel training on c10d; see distributed.h. This is the only file of the project that
// calls c10d. Differences between LibTorch versions are confined here:
//   - 1.13: ProcessGroupGloo/NCCL derive from c10d::ProcessGroup; 2.x: from c10d::Backend (the
//     ProcessGroup became a dispatcher over backends). We hold the backend object directly, whose
//     collective calls (broadcast/allreduce on a tensor vector, returning c10d::Work) are the same
//     in both.
//   - the USE_C10D_GLOO / USE_C10D_NCCL macros guard c10d's own headers and are not exported by
//     TorchConfig.cmake; CMakeLists.txt defines them for this file when the backend is available
//     (Gloo headers present; a CUDA LibTorch for NCCL).
#include "train/distributed.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <unordered_set>

#ifdef USE_C10D_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include "common/error.h"
#include "common/fs.h"

namespace tisa::train {
namespace {

#if TORCH_VERSION_MAJOR >= 2
using BackendBase = c10d::Backend;
#else
using BackendBase = c10d::ProcessGroup;
#endif

const char* getenv_or_null(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}

int64_t parse_int_env(const char* name, const char* value) {
  try {
    size_t used = 0;
    const long long v = std::stoll(value, &used);
    if (used != std::string(value).size()) throw std::invalid_argument("trailing characters");
    return v;
  } catch (const std::exception&) {
    throw Error(std::string("environment variable ") + name + "='" + value + "' is not an integer");
  }
}

// First of the variables that is set, as an integer; `fallback` when none is.
int64_t int_env(std::initializer_list<const char*> names, int64_t fallback, std::string* which = nullptr) {
  for (const char* n : names)
    if (const char* v = getenv_or_null(n)) {
      if (which) *which = n;
      return parse_int_env(n, v);
    }
  return fallback;
}

bool is_loopback(const std::string& addr) {
  return addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1";
}

// Runs a collective's wait and turns c10d/Gloo failures into a tisa::Error that says what to
// look at (the most common cause: a peer rank exited).
void wait_work(const c10::intrusive_ptr<c10d::Work>& work, const char* what, const DistEnv& env) {
  try {
    work->wait();
  } catch (const std::exception& e) {
    std::string msg = e.what();
    if (msg.size() > 600) msg = msg.substr(0, 600) + "...";
    throw Error("[dist] rank " + std::to_string(env.rank) + "/" + std::to_string(env.world_size) + ": " + what +
                " failed: " + msg +
                "\n  (another rank probably exited or stopped answering; collectives time out after " +
                std::to_string(env.timeout.count() / 1000) + " s, env TISA_DIST_TIMEOUT)");
  }
}

}  // namespace

// ---------------------------------------------------------------------------- environment

DistEnv DistEnv::from_environment() {
  DistEnv env;
  std::string world_var = "WORLD_SIZE";
  // torchrun / launch.sh variables first; SLURM's only inside an srun step (SLURM_PROCID set).
  const bool slurm = !getenv_or_null("WORLD_SIZE") && getenv_or_null("SLURM_PROCID");
  if (slurm) {
    env.world_size = static_cast<int>(int_env({"SLURM_NTASKS"}, 1, &world_var));
    env.rank = static_cast<int>(int_env({"SLURM_PROCID"}, 0));
    env.local_rank = static_cast<int>(int_env({"SLURM_LOCALID"}, 0));
  } else {
    env.world_size = static_cast<int>(int_env({"WORLD_SIZE"}, 1));
    env.rank = static_cast<int>(int_env({"RANK"}, 0));
    env.local_rank = static_cast<int>(int_env({"LOCAL_RANK"}, env.rank));
  }
  if (env.world_size < 1) throw Error(world_var + "=" + std::to_string(env.world_size) + ": must be at least 1");
  if (env.rank < 0 || env.rank >= env.world_size)
    throw Error("RANK=" + std::to_string(env.rank) + " is outside [0, " + world_var + "=" +
                std::to_string(env.world_size) + ")");
  if (const char* t = getenv_or_null("TISA_DIST_TIMEOUT")) {
    double seconds = 0;
    try {
      seconds = std::stod(t);
    } catch (const std::exception&) {
      seconds = -1;
    }
    if (!(seconds > 0)) throw Error(std::string("TISA_DIST_TIMEOUT='") + t + "': expected a positive number of seconds");
    env.timeout = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0));
  }
  if (env.world_size > 1) {
    const char* addr = getenv_or_null("MASTER_ADDR");
    const char* port = getenv_or_null("MASTER_PORT");
    if (!addr || !port)
      throw Error(std::string(world_var) + "=" + std::to_string(env.world_size) +
                  " but MASTER_ADDR and MASTER_PORT are not both set (hint: start the processes with "
                  "scripts/launch.sh N -- tisa-train ..., torchrun, or set them as in README \"Distributed training\")");
    env.master_addr = addr;
    const int64_t p = parse_int_env("MASTER_PORT", port);
    if (p <= 0 || p > 65535) throw Error("MASTER_PORT=" + std::string(port) + ": expected a TCP port 1..65535");
    env.master_port = static_cast<int>(p);
  }
  return env;
}

// ---------------------------------------------------------------------------- process group

struct Distributed::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<BackendBase> pg;
  std::string backend = "none";
  c10::Device comm_device = c10::Device(c10::kCPU);  // where collectives' tensors must live
  int64_t main_first_count = 0;                       // keys of main_first(), same sequence on all ranks

  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors, c10d::ReduceOp op) {
    c10d::AllreduceOptions opts;
    opts.reduceOp = op;
    return pg->allreduce(tensors, opts);
  }
  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors, int root) {
    c10d::BroadcastOptions opts;
    opts.rootRank = root;
    opts.rootTensor = 0;
    return pg->broadcast(tensors, opts);
  }
};

Distributed::Distributed() : impl_(std::make_unique<Impl>()) {}

Distributed::Distributed(const DistEnv& env, const c10::Device& device) : env_(env), impl_(std::make_unique<Impl>()) {
  if (env_.world_size <= 1) return;
  c10d::TCPStoreOptions so;
  so.port = static_cast<std::uint16_t>(env_.master_port);
  so.isServer = env_.rank == 0;
  so.numWorkers = static_cast<size_t>(env_.world_size);
  so.waitWorkers = true;
  so.timeout = env_.timeout;
  spdlog::info("[dist] rank {}/{} (local {}) joining {}:{} (timeout {} s)", env_.rank, env_.world_size,
               env_.local_rank, env_.master_addr, env_.master_port, env_.timeout.count() / 1000.0);
  try {
    impl_->store = c10::make_intrusive<c10d::TCPStore>(env_.master_addr, so);
  } catch (const std::exception& e) {
    throw Error("[dist] rank " + std::to_string(env_.rank) + ": cannot reach the rendezvous store at " +
                env_.master_addr + ":" + std::to_string(env_.master_port) + " within " +
                std::to_string(env_.timeout.count() / 1000) + " s: " + e.what() +
                " (hint: are all WORLD_SIZE processes started, is MASTER_PORT free and reachable?)");
  }
  const bool cuda = device.is_cuda();
  try {
    if (cuda) {
#ifdef USE_C10D_NCCL
      // Let NCCL abort a collective whose peer died instead of hanging (1.13 / 2.x names).
      ::setenv("NCCL_ASYNC_ERROR_HANDLING", "1", 0);
      ::setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1", 0);
      auto opts = c10d::ProcessGroupNCCL::Options::create();
      opts->timeout = env_.timeout;
      impl_->pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(impl_->store, env_.rank, env_.world_size, opts);
      impl_->backend = "nccl";
      impl_->comm_device = device;
#endif
    }
    if (!impl_->pg) {
#ifdef USE_C10D_GLOO
      auto opts = c10d::ProcessGroupGloo::Options::create(env_.timeout);
      if (const char* ifname = getenv_or_null("GLOO_SOCKET_IFNAME"))
        opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
      else if (is_loopback(env_.master_addr))
        opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      else
        opts->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      opts->threads = 2;
      impl_->pg = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, env_.rank, env_.world_size, opts);
      impl_->backend = "gloo";
      impl_->comm_device = c10::Device(c10::kCPU);
      if (cuda) spdlog::warn("[dist] this LibTorch has no NCCL: CUDA gradients are reduced through Gloo on the host");
#else
      throw Error("this build of tisa-train has no c10d backend (Gloo headers were not found at build time; "
                  "install libgloo-dev and rebuild, or run with WORLD_SIZE=1)");
#endif
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("[dist] rank " + std::to_string(env_.rank) + ": creating the process group failed: " + e.what());
  }
  spdlog::info("[dist] rank {}/{} ready ({})", env_.rank, env_.world_size, impl_->backend);
}

Distributed::~Distributed() {
  // Backend first (its threads use the store), then the store.
  impl_->pg.reset();
  impl_->store.reset();
}

std::unique_ptr<Distributed> Distributed::from_environment(const c10::Device& device) {
  DistEnv env = DistEnv::from_environment();
  if (!env.distributed()) return std::make_unique<Distributed>();
  return std::make_unique<Distributed>(env, device);
}

std::string Distributed::backend_name() const { return impl_->backend; }

Distributed& process_group(const c10::Device& device) {
  // Never destroyed: tearing Gloo down during static destruction, after LibTorch's own statics,
  // is unsafe; the operating system closes the sockets at exit.
  static Distributed* group = nullptr;
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (!group) {
    group = Distributed::from_environment(device).release();
    if (!group->is_main()) spdlog::set_level(spdlog::level::warn);
  }
  return *group;
}

namespace {

// Groups tensor indices into runs of equal dtype/device of at most `bytes` each (a tensor larger
// than `bytes` gets a group of its own).
std::vector<std::vector<size_t>> group_tensors(const std::vector<at::Tensor>& tensors, const std::vector<size_t>& order,
                                               int64_t bytes) {
  std::vector<std::vector<size_t>> groups;
  int64_t used = 0;
  for (size_t i : order) {
    const auto& t = tensors[i];
    const int64_t b = t.numel() * static_cast<int64_t>(t.element_size());
    bool fresh = groups.empty() || used + b > bytes;
    if (!fresh) {
      const auto& first = tensors[groups.back().front()];
      fresh = first.scalar_type() != t.scalar_type() || first.device() != t.device();
    }
    if (fresh) {
      groups.emplace_back();
      used = 0;
    }
    groups.back().push_back(i);
    used += b;
  }
  return groups;
}

}  // namespace

void Distributed::broadcast_tensors(const std::vector<at::Tensor>& tensors, int root) {
  if (!enabled() || tensors.empty()) return;
  torch::NoGradGuard no_grad;
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (const auto& group : group_tensors(tensors, order, GradientReducer::kDefaultBucketBytes)) {
    std::vector<at::Tensor> parts;
    for (size_t i : group) parts.push_back(tensors[i].detach().reshape({-1}));
    std::vector<at::Tensor> flat{torch::cat(parts).to(impl_->comm_device)};  // [sum numel]
    wait_work(impl_->broadcast(flat, root), "broadcast of the initial parameters", env_);
    int64_t offset = 0;
    for (size_t i : group) {
      auto& t = tensors[i];
      auto view = flat[0].narrow(0, offset, t.numel()).view(t.sizes());
      const_cast<at::Tensor&>(t).detach().copy_(view);
      offset += t.numel();
    }
  }
}

std::vector<double> Distributed::all_reduce_sum(const std::vector<double>& values) {
  if (!enabled() || values.empty()) return values;
  auto t = torch::tensor(values, torch::TensorOptions().dtype(torch::kFloat64)).to(impl_->comm_device);
  std::vector<at::Tensor> v{t};
  wait_work(impl_->allreduce(v, c10d::ReduceOp::SUM), "all-reduce of metrics", env_);
  auto host = v[0].to(torch::kCPU).contiguous();
  return std::vector<double>(host.data_ptr<double>(), host.data_ptr<double>() + host.numel());
}

double Distributed::all_reduce_max(double value) {
  if (!enabled()) return value;
  auto t = torch::full({1}, value, torch::TensorOptions().dtype(torch::kFloat64)).to(impl_->comm_device);
  std::vector<at::Tensor> v{t};
  wait_work(impl_->allreduce(v, c10d::ReduceOp::MAX), "all-reduce (max)", env_);
  return v[0].to(torch::kCPU).item<double>();
}

void Distributed::require_same_on_all_ranks(uint64_t fingerprint, const std::string& what) {
  if (!enabled()) return;
  // Max and min of each 32-bit half (exact in a double) agree on every rank iff all are equal.
  const double hi = static_cast<double>(fingerprint >> 32), lo = static_cast<double>(fingerprint & 0xffffffffULL);
  const bool same = all_reduce_max(hi) == -all_reduce_max(-hi) && all_reduce_max(lo) == -all_reduce_max(-lo);
  if (!same)
    throw Error("[dist] the " + std::to_string(world_size()) + " processes disagree on " + what + " (rank " +
                std::to_string(rank()) + " has fingerprint " + fs::to_hex(fingerprint) +
                "): start every process with the same command line, --config and --set options");
}

void Distributed::all_reduce_sum_(at::Tensor& tensor) {
  if (!enabled()) return;
  const bool move = tensor.device() != impl_->comm_device || !tensor.is_contiguous();
  std::vector<at::Tensor> v{move ? tensor.contiguous().to(impl_->comm_device) : tensor};
  wait_work(impl_->allreduce(v, c10d::ReduceOp::SUM), "all-reduce", env_);
  if (move) tensor.copy_(v[0]);
}

void Distributed::barrier() {
  // An all-reduce of one number: the same on every backend and version (c10d's barrier() needs
  // device hints on NCCL).
  if (enabled()) all_reduce_sum(1.0);
}

void Distributed::main_first(const std::function<void()>& fn, const std::string& what) {
  if (!enabled()) {
    fn();
    return;
  }
  const std::string key = "tisa/main_first/" + std::to_string(impl_->main_first_count++);
  if (is_main()) {
    try {
      fn();
    } catch (...) {
      try {
        impl_->store->set(key, std::vector<uint8_t>{'e'});
      } catch (const std::exception&) {
      }
      throw;
    }
    impl_->store->set(key, std::vector<uint8_t>{'o'});
    return;
  }
  spdlog::info("[dist] rank {} waits for rank 0: {}", env_.rank, what);
  std::vector<uint8_t> value;
  try {
    while (!impl_->store->check({key})) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    value = impl_->store->get(key);
  } catch (const std::exception& e) {
    throw Error("[dist] rank " + std::to_string(env_.rank) + ": lost rank 0 while it was busy with " + what + ": " +
                e.what());
  }
  if (value.empty() || value[0] != 'o')
    throw Error("[dist] rank " + std::to_string(env_.rank) + ": rank 0 failed at " + what + " (see its log)");
}

void Distributed::check_replicas_equal(const std::vector<at::Tensor>& tensors, double tolerance) {
  if (!enabled() || tensors.empty()) return;
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> parts;
  for (const auto& t : tensors) parts.push_back(t.detach().reshape({-1}).to(torch::kFloat64));
  auto flat = torch::cat(parts).to(impl_->comm_device);  // [sum numel]
  std::vector<at::Tensor> hi{flat.clone()}, neg_lo{-flat};
  wait_work(impl_->allreduce(hi, c10d::ReduceOp::MAX), "replica check", env_);
  wait_work(impl_->allreduce(neg_lo, c10d::ReduceOp::MAX), "replica check", env_);
  const double spread = (hi[0] + neg_lo[0]).max().item<double>();  // max over elements of (max - min) over ranks
  if (spread > tolerance)
    throw Error("[dist] the replicas differ between ranks by up to " + std::to_string(spread) + " (tolerance " +
                std::to_string(tolerance) + "): data-parallel training lost sync");
}

// ---------------------------------------------------------------------------- gradient buckets

struct GradientReducer::State {
  struct Bucket {
    std::vector<size_t> members;   // parameter indices
    std::vector<int64_t> offsets;  // element offset of each member in `flat`
    at::Tensor flat;               // [sum numel] on the parameters' device
    at::Tensor comm;               // what is all-reduced: `flat`, or its host copy for Gloo + CUDA
    int64_t pending = 0;           // members not yet ready in the armed backward
    bool launched = false;
    c10::intrusive_ptr<c10d::Work> work;
  };
  Distributed* dist = nullptr;
  GradientReduction reduction = GradientReduction::kAverage;
  std::vector<at::Tensor> params;
  std::vector<Bucket> buckets;
  std::vector<size_t> bucket_of, slot_of;  // parameter → bucket, position in bucket
  std::vector<char> ready;
  std::vector<unsigned> hooks;
  bool armed = false;
  size_t next_launch = 0;
  int64_t launched_early = 0;
  std::mutex mutex;

  at::Tensor view(size_t p) {
    auto& b = buckets[bucket_of[p]];
    const auto& t = params[p];
    return b.flat.narrow(0, b.offsets[slot_of[p]], t.numel()).view(t.sizes());
  }
  // Copies parameter p's current gradient (+ `extra`, the one being accumulated) into its view.
  void fill(size_t p, const at::Tensor& extra) {
    auto v = view(p);
    const auto& g = params[p].grad();
    if (extra.defined() && g.defined()) torch::add_out(v, g, extra);
    else if (extra.defined()) v.copy_(extra);
    else if (g.defined()) v.copy_(g);
    else v.zero_();
  }
  // Launches, in bucket order, every bucket whose members are all ready (same order on every rank).
  void launch_ready() {
    while (next_launch < buckets.size() && buckets[next_launch].pending == 0) {
      auto& b = buckets[next_launch++];
      b.comm = b.flat.device() == dist->impl().comm_device ? b.flat : b.flat.to(dist->impl().comm_device);
      std::vector<at::Tensor> v{b.comm};
      b.work = dist->impl().allreduce(v, c10d::ReduceOp::SUM);
      b.launched = true;
    }
  }
  void on_grad(size_t p, const at::Tensor& grad) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!armed || ready[p]) return;
    torch::NoGradGuard no_grad;
    fill(p, grad);
    ready[p] = 1;
    --buckets[bucket_of[p]].pending;
    const size_t before = next_launch;
    launch_ready();
    launched_early += static_cast<int64_t>(next_launch - before);
  }
};

GradientReducer::GradientReducer(Distributed& dist, const std::vector<at::Tensor>& parameters, int64_t bucket_bytes,
                                 GradientReduction reduction)
    : dist_(dist), state_(std::make_shared<State>()) {
  state_->dist = &dist;
  state_->reduction = reduction;
  if (!dist.enabled()) return;
  std::unordered_set<const void*> seen;
  for (const auto& p : parameters) {
    if (!p.defined() || !p.requires_grad()) continue;
    if (!seen.insert(p.unsafeGetTensorImpl()).second) continue;  // tied weights: once
    state_->params.push_back(p);
  }
  // Reverse registration order approximates the order in which backward finishes gradients.
  std::vector<size_t> order(state_->params.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = order.size() - 1 - i;
  const auto groups = group_tensors(state_->params, order, bucket_bytes);
  state_->bucket_of.assign(state_->params.size(), 0);
  state_->slot_of.assign(state_->params.size(), 0);
  state_->ready.assign(state_->params.size(), 0);
  for (const auto& g : groups) {
    State::Bucket b;
    int64_t n = 0;
    for (size_t p : g) {
      state_->bucket_of[p] = state_->buckets.size();
      state_->slot_of[p] = b.members.size();
      b.members.push_back(p);
      b.offsets.push_back(n);
      n += state_->params[p].numel();
    }
    b.flat = torch::zeros({n}, state_->params[g.front()].options().requires_grad(false));  // [n]
    state_->buckets.push_back(std::move(b));
  }
  std::weak_ptr<State> weak = state_;
  for (size_t p = 0; p < state_->params.size(); ++p)
    state_->hooks.push_back(state_->params[p].register_hook([weak, p](const at::Tensor& grad) {
      if (auto s = weak.lock()) s->on_grad(p, grad);
    }));
}

GradientReducer::~GradientReducer() {
  for (size_t p = 0; p < state_->hooks.size(); ++p) {
    try {
      state_->params[p].remove_hook(state_->hooks[p]);
    } catch (const std::exception&) {
      // The hook checks the weak pointer and does nothing once the state is gone.
    }
  }
}

void GradientReducer::arm(bool last) {
  if (!dist_.enabled()) return;
  std::lock_guard<std::mutex> lock(state_->mutex);
  TISA_CHECK(state_->next_launch == 0, "GradientReducer::arm during an unfinished reduction");
  state_->armed = last;
  std::fill(state_->ready.begin(), state_->ready.end(), 0);
  for (auto& b : state_->buckets) b.pending = static_cast<int64_t>(b.members.size());
  state_->launched_early = 0;
}

void GradientReducer::reduce() {
  if (!dist_.enabled()) return;
  auto& s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  torch::NoGradGuard no_grad;
  if (!s.armed) {  // plain use: nothing was hooked, copy every gradient now
    s.launched_early = 0;
    for (auto& b : s.buckets) b.pending = static_cast<int64_t>(b.members.size());
    std::fill(s.ready.begin(), s.ready.end(), 0);
  }
  // Parameters whose hook did not fire (unused in this backward, or not armed) contribute their
  // current .grad() (or zero).
  for (size_t p = 0; p < s.params.size(); ++p)
    if (!s.ready[p]) {
      s.fill(p, at::Tensor());
      s.ready[p] = 1;
      --s.buckets[s.bucket_of[p]].pending;
    }
  s.launch_ready();
  const double inv_world = 1.0 / static_cast<double>(dist_.world_size());
  for (auto& b : s.buckets) {
    wait_work(b.work, "all-reduce of gradients", dist_.env());
    if (!b.comm.is_same(b.flat)) b.flat.copy_(b.comm);
    if (s.reduction == GradientReduction::kAverage) b.flat.mul_(inv_world);
    for (size_t k = 0; k < b.members.size(); ++k) {
      const size_t p = b.members[k];
      auto& param = s.params[p];
      auto v = s.view(p);
      if (param.grad().defined()) param.mutable_grad().copy_(v);
      else param.mutable_grad() = v.clone();
    }
    b.work.reset();
    b.comm = at::Tensor();
    b.launched = false;
  }
  s.next_launch = 0;
  s.armed = false;
}

int64_t GradientReducer::num_buckets() const { return static_cast<int64_t>(state_->buckets.size()); }
int64_t GradientReducer::buckets_launched_early() const { return state_->launched_early; }

c10::Device rank_device(const c10::Device& configured) {
  if (!configured.is_cuda()) return configured;
  const DistEnv env = DistEnv::from_environment();
  if (!env.distributed()) return configured;
  const int64_t n = std::max<int64_t>(1, static_cast<int64_t>(torch::cuda::device_count()));
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank % n));
}

// ---------------------------------------------------------------------------- global batch

int64_t accumulation_for_world(int64_t global_batch, int64_t batch_size, int64_t accumulation, int world_size) {
  if (batch_size <= 0) throw Error("training.batch_size must be positive (got " + std::to_string(batch_size) + ")");
  if (global_batch <= 0) {
    if (accumulation <= 0)
      throw Error("training.accumulation must be positive (got " + std::to_string(accumulation) + ")");
    return accumulation;
  }
  const int64_t per_micro = batch_size * world_size;
  if (global_batch % per_micro != 0)
    throw Error("training.global_batch " + std::to_string(global_batch) + " is not a multiple of training.batch_size " +
                std::to_string(batch_size) + " × " + std::to_string(world_size) +
                " processes (global batch = batch_size × accumulation × world size); hint: choose a batch_size "
                "and process count whose product divides " + std::to_string(global_batch));
  return global_batch / per_micro;
}

}  // namespace tisa::train
