// OpProfiler; see op_profile.h.
#include "bench/op_profile.h"

#include <ATen/record_function.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "common/error.h"
#include "common/fs.h"

namespace tisa::bench {
namespace {

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Frame : at::ObserverContext {
  double start_us = 0;
  double child_us = 0;
  double flops = 0;
  int depth = 0;
  Frame* parent = nullptr;
};

// Global recording state (one profiler at a time).
std::mutex g_mutex;
std::vector<OpProfiler::Event> g_events;
std::unordered_map<std::string, const char*> g_names;  // interned copies of operator names
std::vector<std::unique_ptr<std::string>> g_name_store;
thread_local Frame* t_top = nullptr;

const char* intern(const char* name) {
  auto it = g_names.find(name);
  if (it != g_names.end()) return it->second;
  g_name_store.push_back(std::make_unique<std::string>(name));
  const char* p = g_name_store.back()->c_str();
  g_names.emplace(*g_name_store.back(), p);
  return p;
}

int64_t dim(const c10::IValue& v, int64_t i) {
  if (!v.isTensor()) return 0;
  const auto& t = v.toTensor();
  if (!t.defined() || t.dim() <= i) return 0;
  return t.size(i);
}

// 2·m·n·k (times batch) of the BLAS operators, from their inputs (tisa::sgemm: M, N, K; model/cpu_linear.h).
double blas_flops(const at::RecordFunction& fn) {
  const char* n = fn.name();
  auto in = fn.inputs();
  auto mm = [&](size_t a, size_t b) {  // a [m, k], b [k, n]
    if (in.size() <= std::max(a, b)) return 0.0;
    return 2.0 * dim(in[a], 0) * dim(in[a], 1) * dim(in[b], 1);
  };
  auto bmm = [&](size_t a, size_t b) {  // a [z, m, k], b [z, k, n]
    if (in.size() <= std::max(a, b)) return 0.0;
    return 2.0 * dim(in[a], 0) * dim(in[a], 1) * dim(in[a], 2) * dim(in[b], 2);
  };
  if (!std::strcmp(n, "aten::mm")) return mm(0, 1);
  if (!std::strcmp(n, "aten::addmm") || !std::strcmp(n, "aten::_addmm_activation")) return mm(1, 2);
  if (!std::strcmp(n, "aten::bmm")) return bmm(0, 1);
  if (!std::strcmp(n, "aten::baddbmm")) return bmm(1, 2);
  if (!std::strcmp(n, "tisa::sgemm") && in.size() == 3 && in[0].isInt() && in[1].isInt() && in[2].isInt())
    return 2.0 * static_cast<double>(in[0].toInt()) * static_cast<double>(in[1].toInt()) * static_cast<double>(in[2].toInt());
  return 0.0;
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  auto f = std::make_unique<Frame>();
  f->flops = blas_flops(fn);
  f->parent = t_top;
  f->depth = t_top ? t_top->depth + 1 : 0;
  t_top = f.get();
  f->start_us = now_us();
  return f;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext* ctx) {
  const double end = now_us();
  auto* f = static_cast<Frame*>(ctx);
  if (!f) return;
  if (t_top == f) t_top = f->parent;
  if (f->parent) f->parent->child_us += end - f->start_us;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_events.push_back({intern(fn.name()), static_cast<uint64_t>(fn.threadId()), f->start_us, end, f->child_us,
                      f->flops, f->depth});
}

bool is_blas(const char* n) {
  return !std::strcmp(n, "aten::mm") || !std::strcmp(n, "aten::addmm") || !std::strcmp(n, "aten::bmm") ||
         !std::strcmp(n, "aten::baddbmm") || !std::strcmp(n, "aten::_addmm_activation") || !std::strcmp(n, "tisa::sgemm");
}

}  // namespace

OpProfiler::OpProfiler() = default;
OpProfiler::~OpProfiler() {
  if (active_) stop();
}

void OpProfiler::start() {
  if (active_) throw Error("OpProfiler::start: already started");
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_events.clear();
    g_events.reserve(1 << 16);
  }
  t_top = nullptr;
  handle_ = at::addGlobalCallback(at::RecordFunctionCallback(&on_start, &on_end).needsInputs(true));
  active_ = true;
  t0_us_ = now_us();
}

void OpProfiler::stop() {
  if (!active_) return;
  t1_us_ = now_us();
  at::removeCallback(handle_);
  active_ = false;
}

ProfileSummary OpProfiler::summary() const {
  ProfileSummary s;
  s.wall_us = t1_us_ - t0_us_;
  std::map<std::string, OpStats> by_name;
  std::lock_guard<std::mutex> lock(g_mutex);
  for (const auto& e : g_events) {
    auto& o = by_name[e.name];
    o.name = e.name;
    o.calls += 1;
    o.total_us += e.end_us - e.start_us;
    o.self_us += e.end_us - e.start_us - e.child_us;
    o.flops += e.flops;
    if (is_blas(e.name)) {
      s.blas_us += e.end_us - e.start_us - e.child_us;
      s.blas_flops += e.flops;
    }
  }
  for (auto& [name, o] : by_name) s.ops.push_back(o);
  std::sort(s.ops.begin(), s.ops.end(), [](const OpStats& a, const OpStats& b) { return a.self_us > b.self_us; });
  return s;
}

std::string OpProfiler::table(int64_t steps, int top) const {
  const auto s = summary();
  const double per = static_cast<double>(std::max<int64_t>(1, steps));
  double self_sum = 0;
  for (const auto& o : s.ops) self_sum += o.self_us;
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof line, "wall %.1f ms/step; operator self time %.1f ms/step; BLAS %.1f ms/step at %.1f GFLOP/s\n",
                s.wall_us / 1e3 / per, self_sum / 1e3 / per, s.blas_us / 1e3 / per,
                s.blas_us > 0 ? s.blas_flops / (s.blas_us * 1e3) : 0.0);
  out << line;
  std::snprintf(line, sizeof line, "%-44s %8s %10s %7s %10s %9s\n", "operator", "calls/st", "self ms/st", "self %",
                "incl ms/st", "GFLOP/s");
  out << line;
  int shown = 0;
  for (const auto& o : s.ops) {
    if (shown++ >= top) break;
    std::snprintf(line, sizeof line, "%-44.44s %8.1f %10.2f %6.1f%% %10.2f %9s\n", o.name.c_str(), o.calls / per,
                  o.self_us / 1e3 / per, self_sum > 0 ? 100.0 * o.self_us / self_sum : 0.0, o.total_us / 1e3 / per,
                  o.flops > 0 ? std::to_string(static_cast<int>(o.flops / (o.self_us * 1e3))).c_str() : "");
    out << line;
  }
  return out.str();
}

void OpProfiler::write_chrome_trace(const std::string& path, size_t max_events) const {
  std::ostringstream out;
  out << "{\"traceEvents\":[\n";
  std::lock_guard<std::mutex> lock(g_mutex);
  const size_t n = std::min(max_events, g_events.size());
  for (size_t i = 0; i < n; ++i) {
    const auto& e = g_events[i];
    char line[320];
    std::snprintf(line, sizeof line, "%s{\"name\":\"%s\",\"ph\":\"X\",\"pid\":0,\"tid\":%llu,\"ts\":%.3f,\"dur\":%.3f}\n",
                  i ? "," : "", e.name, static_cast<unsigned long long>(e.thread), e.start_us - t0_us_,
                  e.end_us - e.start_us);
    out << line;
  }
  out << "]}\n";
  fs::write_file_atomic(path, out.str());
}

}  // namespace tisa::bench
