// Counter-based, splittable random numbers for the data pipeline (SPEC §5, dynamic masking).
//
// Every random decision about a pretraining example is drawn from a generator whose state is a
// pure function of a key (seed, stream tag, epoch, example id, ...), never of how many numbers
// some other example consumed. So any example can be rebuilt on its own, in any thread, on any
// rank, after a resume: exactly what exact resume and multi-process sharding need.
//
// The generator is SplitMix64 (Steele, Lea & Flood 2014): state += golden gamma, output = a
// 64-bit finaliser of the state. Keys are folded into the initial state with the same finaliser.
// Platform-independent: only 64-bit integer arithmetic; doubles come from the top 53 bits.
#pragma once
#include <cstdint>
#include <initializer_list>

namespace tisa::data {

// The SplitMix64 / Murmur3-style 64-bit finaliser.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class CounterRng {
 public:
  // State derived from a list of key words (order matters).
  explicit CounterRng(std::initializer_list<uint64_t> key) {
    uint64_t s = 0x6a09e667f3bcc909ULL;
    for (uint64_t k : key) s = mix64(s ^ mix64(k + kGamma));
    state_ = s;
  }

  uint64_t next_u64() {
    state_ += kGamma;
    return mix64(state_);
  }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n) without modulo bias; n > 0.
  uint64_t below(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;  // accept values < limit
    uint64_t x;
    do x = next_u64(); while (x >= limit);
    return x % n;
  }
  // Uniform integer in [lo, hi] (inclusive, as Python's random.randint).
  int64_t randint(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
  }
  bool bernoulli(double p) { return uniform() < p; }

 private:
  static constexpr uint64_t kGamma = 0x9e3779b97f4a7c15ULL;
  uint64_t state_;
};

// Stream tags: distinct key prefixes so that the streams of different decisions never coincide.
enum class RngStream : uint64_t {
  kSegmentation = 0x5345474dULL,  // chunking documents into examples
  kOrder = 0x4f524452ULL,         // example order of an epoch
  kExample = 0x4558414dULL,       // A/B split, SOP swap, truncation, masking of one example
  kSplit = 0x53504c54ULL,         // train/valid split of documents (preparation)
};

}  // namespace tisa::data
