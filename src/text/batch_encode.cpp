// Parallel encoding; see batch_encode.h.
#include "text/batch_encode.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

namespace tisa::text {

int resolve_threads(int threads) {
  if (threads > 0) return threads;
  return std::max(1, int(std::thread::hardware_concurrency()));
}

std::vector<std::vector<int32_t>> encode_batch(const Tokenizer& tokenizer, const std::vector<std::string>& texts,
                                               int threads) {
  std::vector<std::vector<int32_t>> out(texts.size());
  const size_t n_threads = std::min<size_t>(size_t(resolve_threads(threads)), std::max<size_t>(1, texts.size() / 64));
  constexpr size_t kChunk = 64;
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&]() {
    try {
      for (;;) {
        const size_t begin = next.fetch_add(kChunk);
        if (begin >= texts.size()) return;
        const size_t end = std::min(texts.size(), begin + kChunk);
        for (size_t i = begin; i < end; ++i) out[i] = tokenizer.encode(texts[i]);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      next = texts.size();
    }
  };
  if (n_threads <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (size_t t = 0; t < n_threads; ++t) pool.emplace_back(work);
    for (auto& th : pool) th.join();
  }
  if (error) std::rethrow_exception(error);
  return out;
}

}  // namespace tisa::text
