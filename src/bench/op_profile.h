// A small operator profiler for the benchmarks: where the time of a training step goes.
//
// Built on ATen's RecordFunction callbacks (at::addGlobalCallback), an API that is the same in
// LibTorch 1.13 and 2.x, so it works whether or not the LibTorch build has Kineto. Every ATen
// operator call (forward and autograd backward) is timed; per operator name we keep the number
// of calls, inclusive time and self time (inclusive minus nested operators on the same thread).
// For the BLAS operators (aten::mm, addmm, bmm, baddbmm) the floating-point operations are
// computed from the input shapes, so the table shows the matrix-product rate inside the model,
// to compare with `tisa-train bench --gemm`.
//
// Usage:
//   OpProfiler prof;  prof.start();  ... run steps ...  prof.stop();
//   std::cout << prof.summary(steps);  prof.write_chrome_trace("trace.json", 20000);
// Only one profiler may be active at a time (global callbacks). Overhead: ~1 µs per operator.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tisa::bench {

struct OpStats {
  std::string name;
  int64_t calls = 0;
  double total_us = 0;  // inclusive
  double self_us = 0;   // exclusive of nested operators
  double flops = 0;     // BLAS operators only (2·m·n·k per product)
};

struct ProfileSummary {
  std::vector<OpStats> ops;  // sorted by self time, descending
  double wall_us = 0;        // between start() and stop()
  double blas_us = 0;        // self time of BLAS operators
  double blas_flops = 0;
};

class OpProfiler {
 public:
  OpProfiler();
  ~OpProfiler();
  OpProfiler(const OpProfiler&) = delete;
  OpProfiler& operator=(const OpProfiler&) = delete;

  void start();
  void stop();
  ProfileSummary summary() const;
  // Text table of the top `top` operators by self time, times per step (divided by `steps`).
  std::string table(int64_t steps, int top = 25) const;
  // Chrome trace (chrome://tracing, Perfetto) of at most `max_events` events (the first ones).
  void write_chrome_trace(const std::string& path, size_t max_events) const;

  struct Event {
    const char* name;
    uint64_t thread;
    double start_us, end_us, child_us, flops;
    int depth;
  };

 private:
  uint64_t handle_ = 0;
  bool active_ = false;
  double t0_us_ = 0, t1_us_ = 0;
};

}  // namespace tisa::bench
