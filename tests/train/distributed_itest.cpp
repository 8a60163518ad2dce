// Data-parallel engine (train/distributed.h) with real processes on 127.0.0.1: the test binary
// starts copies of itself as ranks (gtest filter DistWorker.Run, mode in TISA_DIST_TEST_MODE).
//   - collectives: broadcast, sums, replica check, and the bucketed gradient average (plain and
//     overlapped with backward, with gradient accumulation, tied and unused parameters) equal to
//     the gradient of the full batch computed in one process;
//   - a rank that exits makes the other fail with a [dist] error well within the timeout;
//   - a rank that hangs makes the other fail once TISA_DIST_TIMEOUT has passed;
//   - main_first: rank 0 may work longer than the timeout while the others wait; its failure
//     reaches them.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/error.h"
#include "support/test_paths.h"
#include "train/distributed.h"

extern char** environ;

namespace tisa::train {
namespace {

using Clock = std::chrono::steady_clock;

// ------------------------------------------------------------------ parent side: processes

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return 29511;
  }
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

struct Child {
  pid_t pid = -1;
  std::string log;
  int status = -1;  // exit code, 128 + signal, -1 while running
  double seconds = 0;
};

std::string self_exe() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
}

// Starts this test binary as rank `rank` of `world` with `mode`; output goes to `log`.
Child spawn_rank(int rank, int world, int port, const std::string& mode, const std::string& log,
                 const std::string& timeout_s) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    const std::string s = *e;
    if (s.rfind("RANK=", 0) == 0 || s.rfind("WORLD_SIZE=", 0) == 0 || s.rfind("LOCAL_RANK=", 0) == 0 ||
        s.rfind("MASTER_", 0) == 0 || s.rfind("TISA_DIST", 0) == 0)
      continue;
    env_strings.push_back(s);
  }
  env_strings.push_back("RANK=" + std::to_string(rank));
  env_strings.push_back("LOCAL_RANK=" + std::to_string(rank));
  env_strings.push_back("WORLD_SIZE=" + std::to_string(world));
  env_strings.push_back("MASTER_ADDR=127.0.0.1");
  env_strings.push_back("MASTER_PORT=" + std::to_string(port));
  env_strings.push_back("TISA_DIST_TIMEOUT=" + timeout_s);
  env_strings.push_back("TISA_DIST_TEST_MODE=" + mode);
  env_strings.push_back("TISA_DIST_TEST_DIR=" + log.substr(0, log.rfind('/')));
  env_strings.push_back("OMP_NUM_THREADS=1");
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string exe = self_exe(), filter = "--gtest_filter=DistWorker.Run";
  std::vector<char*> argv{exe.data(), filter.data(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  Child c;
  c.log = log;
  EXPECT_EQ(posix_spawn(&c.pid, exe.c_str(), &actions, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&actions);
  return c;
}

// Waits for all children (or only for child `only` when >= 0), at most `limit_s` seconds in total;
// kills those still running then.
void wait_all(std::vector<Child>& children, double limit_s, int only = -1) {
  const auto start = Clock::now();
  size_t running = children.size();
  while (running > 0) {
    running = 0;
    for (auto& c : children) {
      if (c.status != -1) continue;
      int st = 0;
      if (::waitpid(c.pid, &st, WNOHANG) == c.pid) {
        c.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        c.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      } else {
        ++running;
      }
    }
    if (running == 0) break;
    const bool done_with_only = only >= 0 && children[static_cast<size_t>(only)].status != -1;
    if (done_with_only || std::chrono::duration<double>(Clock::now() - start).count() > limit_s) {
      for (auto& c : children)
        if (c.status == -1) {
          ::kill(c.pid, SIGKILL);
          int st = 0;
          ::waitpid(c.pid, &st, 0);
          c.status = 128 + SIGKILL;
          c.seconds = std::chrono::duration<double>(Clock::now() - start).count();
        }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string read_log(const Child& c) {
  std::ifstream in(c.log);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<Child> run_world(int world, const std::string& mode, const std::string& timeout_s, double limit_s,
                             int only = -1) {
  const std::string dir = test::make_temp_dir("dist");
  const int port = free_port();
  std::vector<Child> children;
  for (int r = 0; r < world; ++r)
    children.push_back(spawn_rank(r, world, port, mode, dir + "/rank" + std::to_string(r) + ".log", timeout_s));
  wait_all(children, limit_s, only);
  return children;
}

// ------------------------------------------------------------------ worker side

// A tiny network: tied embedding / output projection, one hidden layer, one unused layer.
struct TinyNet : torch::nn::Module {
  torch::nn::Embedding emb{nullptr};
  torch::nn::Linear hidden{nullptr}, unused{nullptr};
  torch::Tensor out_bias;
  TinyNet() {
    // Registered first, so that it lands in the last bucket: a bucket holding an unused parameter
    // is only launched by reduce(), and buckets launch in order.
    unused = register_module("unused", torch::nn::Linear(6, 3));
    emb = register_module("emb", torch::nn::Embedding(11, 6));
    hidden = register_module("hidden", torch::nn::Linear(6, 6));
    out_bias = register_parameter("out_bias", torch::zeros({11}));
  }
  torch::Tensor loss(const torch::Tensor& x, const torch::Tensor& y) {  // x [B, T], y [B]
    auto h = torch::tanh(hidden(emb(x).mean(1)));                        // [B, 6]
    auto logits = torch::matmul(h, emb->weight.t()) + out_bias;          // [B, 11], tied to emb
    return torch::nn::functional::cross_entropy(logits, y);
  }
};

std::vector<torch::Tensor> all_params(TinyNet& net) {
  std::vector<torch::Tensor> ps;
  for (auto& p : net.parameters()) ps.push_back(p);
  ps.push_back(net.emb->weight);  // a tied parameter listed twice must be handled once
  return ps;
}

std::vector<torch::Tensor> grads_of(TinyNet& net) {
  std::vector<torch::Tensor> g;
  for (auto& p : net.parameters()) g.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
  return g;
}

void expect_grads_near(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_LE((a[i] - b[i]).abs().max().item<double>(), tol) << "parameter " << i;
}

void worker_collectives(Distributed& dist) {
  const int r = dist.rank(), w = dist.world_size();
  // Scalars.
  auto sums = dist.all_reduce_sum({1.0, static_cast<double>(r), 0.5});
  EXPECT_DOUBLE_EQ(sums[0], w);
  EXPECT_DOUBLE_EQ(sums[1], w * (w - 1) / 2.0);
  EXPECT_DOUBLE_EQ(sums[2], 0.5 * w);
  EXPECT_DOUBLE_EQ(dist.all_reduce_max(static_cast<double>(r)), w - 1);
  dist.barrier();

  // Broadcast: ranks start from different weights; afterwards all hold rank 0's.
  torch::manual_seed(100 + r);
  TinyNet net;
  torch::manual_seed(100);
  TinyNet reference;  // what rank 0 built
  std::vector<torch::Tensor> to_send;
  for (auto& p : net.parameters()) to_send.push_back(p);
  EXPECT_THROW(dist.check_replicas_equal(to_send), Error);
  dist.broadcast_tensors(to_send);
  auto rp = reference.parameters();
  auto np = net.parameters();
  for (size_t i = 0; i < np.size(); ++i) EXPECT_TRUE(torch::equal(np[i], rp[i])) << "parameter " << i;
  dist.check_replicas_equal(to_send);

  // Data: 4 examples per rank, the full batch is 4w examples.
  torch::manual_seed(7);
  auto x = torch::randint(0, 11, {4 * w, 5});  // [4w, 5]
  auto y = torch::randint(0, 11, {4 * w});     // [4w]
  // Reference: the full-batch gradient in this process.
  reference.zero_grad();
  reference.loss(x, y).backward();
  auto want = grads_of(reference);

  auto mine_x = x.narrow(0, 4 * r, 4), mine_y = y.narrow(0, 4 * r, 4);
  for (int64_t bucket_bytes : {int64_t{64}, GradientReducer::kDefaultBucketBytes}) {
    GradientReducer reducer(dist, all_params(net), bucket_bytes);
    if (bucket_bytes == 64) {
      EXPECT_GT(reducer.num_buckets(), 3);
    }
    // Plain: one backward, then reduce.
    net.zero_grad();
    net.loss(mine_x, mine_y).backward();
    reducer.reduce();
    expect_grads_near(grads_of(net), want, 1e-6);
    // Overlapped with two accumulated micro-batches of 2 examples.
    for (int rep = 0; rep < 2; ++rep) {
      net.zero_grad();
      for (int m = 0; m < 2; ++m) {
        reducer.arm(m == 1);
        (net.loss(mine_x.narrow(0, 2 * m, 2), mine_y.narrow(0, 2 * m, 2)) * 0.5).backward();
      }
      if (bucket_bytes == 64) {
        EXPECT_GT(reducer.buckets_launched_early(), 0);
      }
      reducer.reduce();
      expect_grads_near(grads_of(net), want, 1e-6);
    }
    // The unused layer received a (zero) averaged gradient on every rank.
    ASSERT_TRUE(net.unused->weight.grad().defined());
    EXPECT_EQ(net.unused->weight.grad().abs().max().item<double>(), 0.0);
  }
  // One optimiser step keeps the replicas identical.
  torch::optim::SGD sgd(net.parameters(), torch::optim::SGDOptions(0.1));
  sgd.step();
  dist.check_replicas_equal(to_send);
  // A tensor all-reduce.
  auto t = torch::full({3}, static_cast<double>(r + 1));
  dist.all_reduce_sum_(t);
  EXPECT_DOUBLE_EQ(t[2].item<double>(), w * (w + 1) / 2.0);
}

TEST(DistWorker, Run) {
  const char* mode = std::getenv("TISA_DIST_TEST_MODE");
  if (!mode) GTEST_SKIP() << "only runs as a rank started by the Distributed tests";
  const std::string m = mode;
  auto dist = Distributed::from_environment(torch::kCPU);
  ASSERT_TRUE(dist->enabled());
  EXPECT_EQ(dist->backend_name(), "gloo");
  if (m == "collectives") {
    worker_collectives(*dist);
  } else if (m == "main_first") {
    // Rank 0 works longer than the 2 s collective timeout; the other waits, then sees its file.
    const std::string flag = std::string(std::getenv("TISA_DIST_TEST_DIR")) + "/prepared";
    dist->main_first(
        [&] {
          std::this_thread::sleep_for(std::chrono::seconds(4));
          std::ofstream(flag) << "ok";
        },
        "preparing");
    EXPECT_TRUE(test::file_exists(flag));
    EXPECT_DOUBLE_EQ(dist->all_reduce_sum(1.0), 2.0);
    // A failure on rank 0 is reported on the others.
    bool threw = false;
    try {
      dist->main_first([] { throw Error("no data"); }, "preparing again");
    } catch (const Error& e) {
      threw = true;
      if (dist->rank() == 1) {
        EXPECT_NE(std::string(e.what()).find("rank 0 failed at preparing again"), std::string::npos);
      }
    }
    EXPECT_TRUE(threw);
    // Rank 0 hosts the store: it must not exit before rank 1 has read the failure flag, or rank 1
    // sees "lost rank 0" instead of the failure (a race that made this test flaky).
    EXPECT_DOUBLE_EQ(dist->all_reduce_sum(1.0), 2.0);
  } else if (m == "die" || m == "hang") {
    dist->barrier();
    if (dist->rank() == 1) {
      if (m == "die") std::_Exit(3);
      std::this_thread::sleep_for(std::chrono::seconds(600));
    }
    try {
      for (int i = 0; i < 1000; ++i) dist->all_reduce_sum(1.0);
      ADD_FAILURE() << "the collectives kept succeeding without rank 1";
    } catch (const Error& e) {
      std::fprintf(stderr, "caught: %s\n", e.what());
      std::fflush(stderr);
      std::_Exit(42);  // what the parent expects; skips destructors waiting on a dead peer
    }
  }
}

// ------------------------------------------------------------------ parent tests

TEST(Distributed, SingleProcessIsANoOp) {
  Distributed dist;
  EXPECT_FALSE(dist.enabled());
  EXPECT_TRUE(dist.is_main());
  EXPECT_EQ(dist.all_reduce_sum(2.5), 2.5);
  auto t = torch::ones({2}, torch::requires_grad());
  GradientReducer reducer(dist, {t});
  reducer.arm(true);
  (t * 3).sum().backward();
  reducer.reduce();
  EXPECT_TRUE(torch::equal(t.grad(), torch::full({2}, 3.0)));
}

TEST(Distributed, AccumulationForWorld) {
  EXPECT_EQ(accumulation_for_world(0, 8, 3, 4), 3);          // no global batch: keep accumulation
  EXPECT_EQ(accumulation_for_world(4096, 64, 1, 4), 16);     // 64 × 16 × 4
  EXPECT_EQ(accumulation_for_world(4096, 64, 1, 1), 64);
  EXPECT_THROW(accumulation_for_world(100, 8, 1, 2), Error);  // 100 not a multiple of 16
  EXPECT_THROW(accumulation_for_world(0, 0, 1, 2), Error);
}

TEST(Distributed, EnvironmentIsValidated) {
  ::setenv("WORLD_SIZE", "2", 1);
  ::setenv("RANK", "2", 1);
  EXPECT_THROW(DistEnv::from_environment(), Error);  // rank outside the world
  ::setenv("RANK", "1", 1);
  ::unsetenv("MASTER_ADDR");
  ::unsetenv("MASTER_PORT");
  EXPECT_THROW(DistEnv::from_environment(), Error);  // no rendezvous address
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", "29999", 1);
  ::setenv("TISA_DIST_TIMEOUT", "7.5", 1);
  auto env = DistEnv::from_environment();
  EXPECT_EQ(env.rank, 1);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.world_size, 2);
  EXPECT_EQ(env.master_port, 29999);
  EXPECT_EQ(env.timeout.count(), 7500);
  ::setenv("TISA_DIST_TIMEOUT", "soon", 1);
  EXPECT_THROW(DistEnv::from_environment(), Error);
  for (const char* v : {"WORLD_SIZE", "RANK", "MASTER_ADDR", "MASTER_PORT", "TISA_DIST_TIMEOUT"}) ::unsetenv(v);
  EXPECT_FALSE(DistEnv::from_environment().distributed());
}

TEST(Distributed, TwoRanksAgreeWithOneProcess) {
  auto children = run_world(2, "collectives", "20", 90);
  for (const auto& c : children) EXPECT_EQ(c.status, 0) << read_log(c);
}

TEST(Distributed, MainFirstOutlastsTheTimeout) {
  auto children = run_world(2, "main_first", "2", 60);
  for (const auto& c : children) EXPECT_EQ(c.status, 0) << read_log(c);
}

TEST(Distributed, ARankThatExitsStopsTheOthersQuickly) {
  // Timeout 30 s: the survivor must notice the closed connections long before it.
  auto children = run_world(2, "die", "30", 60);
  EXPECT_EQ(children[1].status, 3) << read_log(children[1]);
  EXPECT_EQ(children[0].status, 42) << read_log(children[0]);
  EXPECT_LT(children[0].seconds, 25.0);
  EXPECT_NE(read_log(children[0]).find("[dist] rank 0/2"), std::string::npos) << read_log(children[0]);
}

TEST(Distributed, ARankThatHangsTimesOut) {
  auto children = run_world(2, "hang", "3", 45, /*only=*/0);  // rank 1 sleeps; killed afterwards
  EXPECT_EQ(children[0].status, 42) << read_log(children[0]);
  EXPECT_LT(children[0].seconds, 30.0);
}

}  // namespace
}  // namespace tisa::train
