// The turns of the spine's two halves (core/spine_halves.hpp), on the host: every run must
// be told to zero exactly what the run before it wrote in the other half, and nothing once
// the halves are new. A run that forgot would leave stale states for the run after it.
#include <gtest/gtest.h>

#include "core/spine_halves.hpp"

namespace gpuscan::testing {
namespace {

TEST(SpineHalvesTest, EachRunClearsWhatTheRunBeforeItWrote) {
  detail::SpineHalves halves;
  const detail::SpineHalves::Turn first = halves.take(10);
  EXPECT_NE(first.half, first.clear_half);
  EXPECT_EQ(first.clear_count, 0u);  // both halves start zeroed
  EXPECT_EQ(halves.last_half(), first.half);

  const detail::SpineHalves::Turn second = halves.take(4);
  EXPECT_EQ(second.half, first.clear_half);
  EXPECT_EQ(second.clear_half, first.half);
  EXPECT_EQ(second.clear_count, 10u);  // the first run's words, in the half it used

  const detail::SpineHalves::Turn third = halves.take(7);
  EXPECT_EQ(third.half, first.half);  // cleared by the second run
  EXPECT_EQ(third.clear_count, 4u);

  // A shrinking run still clears all the larger one wrote before it.
  EXPECT_EQ(halves.take(1).clear_count, 7u);
  EXPECT_EQ(halves.take(0).clear_count, 1u);
  EXPECT_EQ(halves.take(5).clear_count, 0u);
}

TEST(SpineHalvesTest, NewHalvesNeedNoClearing) {
  detail::SpineHalves halves;
  halves.take(8);
  halves.take(9);
  halves.forget_writes();  // a larger spine, zeroed when made
  EXPECT_EQ(halves.take(20).clear_count, 0u);
  EXPECT_EQ(halves.take(3).clear_count, 20u);
}

}  // namespace
}  // namespace gpuscan::testing
