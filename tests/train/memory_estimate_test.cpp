// Issue 18, class 7: sizes that cannot be allocated are refused from the config before any
// allocation, in one sentence naming the keys, instead of an allocator abort.
#include <gtest/gtest.h>

#include "config/config_loader.h"
#include "support/expect_error.h"
#include "train/memory_estimate.h"

namespace {

using tisa::test::error_of;
using namespace tisa::train;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

TEST(MemoryEstimate, AbsurdSizesAreRefusedSmallOnesPass) {
  auto base = tisa::config::config_from_overrides({}).model;  // albert-base sizes
  const auto fits = estimate_training_memory(base, 8, 128, 20);
  EXPECT_GT(fits.parameters, 1e7);
  EXPECT_LT(fits.parameters, 2e7);  // ALBERT-base: ~12M
  require_memory_fits(fits, 16 * kGiB, "training.batch_size", 8, "data.max_seq_length", 128);

  const auto big_batch = estimate_training_memory(base, 100000, 512, 20);
  const std::string msg = error_of([&] {
    require_memory_fits(big_batch, 64 * kGiB, "training.batch_size", 100000, "data.max_seq_length", 512);
  });
  EXPECT_HAS(msg, "this run needs at least");
  EXPECT_HAS(msg, "activations of training.batch_size 100000 x data.max_seq_length 512");
  EXPECT_HAS(msg, "but this machine has 64 GiB");

  auto huge = base;
  huge.hidden_size = 1000000000;
  const auto e = estimate_training_memory(huge, 1, 128, 20);
  EXPECT_GT(e.parameters, 1e18);  // no overflow
  EXPECT_HAS(error_of([&] { require_memory_fits(e, physical_memory_bytes(), "training.batch_size", 1, "L", 128); }),
             "parameters");
  EXPECT_GT(physical_memory_bytes(), 0.0);
}

}  // namespace
