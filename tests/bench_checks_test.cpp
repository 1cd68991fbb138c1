// The benchmarks' own checks (src/core/bench_checks.hpp) that need no device.
#include <gtest/gtest.h>

#include "core/bench_checks.hpp"

namespace gpuscan::detail {
namespace {

// A sweep's memcpy that runs slower on more elements than on fewer, by more than any
// committed record shows, is a size the device ran slow for.
TEST(CopyRateWatch, FlagsASizeWhoseCopyRanFarBelowASmallerOnes) {
  CopyRateWatch watch;
  // An H200's Vulkan compaction sweep: 2^26 at 0.1335 ms, then 2^27 at 0.636 ms (2.4x slower
  // than its bytes say), then 2^28 at 0.5158 ms.
  EXPECT_FALSE(watch.note(std::size_t{1} << 26, 0.1335));
  const auto slow = watch.note(std::size_t{1} << 27, 0.636);
  ASSERT_TRUE(slow);
  EXPECT_EQ(slow->faster_n, std::size_t{1} << 26);
  EXPECT_NEAR(slow->share, 2 * 0.1335 / 0.636, 1e-9);
  EXPECT_FALSE(watch.note(std::size_t{1} << 28, 0.5158));
}

TEST(CopyRateWatch, LeavesOrdinarySweepsAlone) {
  CopyRateWatch watch;
  // Small sizes run far below memcpy's large-n rate; a large size 14% below a smaller one (the
  // committed records' worst, an H100's u64 Vulkan sweep at 2^19) is not flagged either.
  EXPECT_FALSE(watch.note(1024, 0.006));
  EXPECT_FALSE(watch.note(1u << 18, 0.010));
  EXPECT_FALSE(watch.note(1u << 19, 0.010 * 2 / 0.87));
  EXPECT_FALSE(watch.note(std::size_t{1} << 26, 0.13));
  // Sizes in any order: a smaller n noted after a larger one is compared with smaller ones only.
  EXPECT_FALSE(watch.note(1u << 20, 0.04));
  // No time (memcpy not run) says nothing.
  EXPECT_FALSE(watch.note(std::size_t{1} << 27, 0.0));
}

TEST(CopyRateWatch, ReportsTheFastestSmallerSize) {
  CopyRateWatch watch;
  EXPECT_FALSE(watch.note(100, 1.0));      // 100 a ms
  EXPECT_FALSE(watch.note(200, 1.0));      // 200 a ms
  const auto slow = watch.note(400, 4.0);  // 100 a ms: half of 200's rate, 1.0 of 100's
  ASSERT_TRUE(slow);
  EXPECT_EQ(slow->faster_n, 200u);
  EXPECT_DOUBLE_EQ(slow->share, 0.5);
}

}  // namespace
}  // namespace gpuscan::detail
