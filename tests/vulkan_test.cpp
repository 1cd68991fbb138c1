// What only the Vulkan backend has: logical subgroups narrower than the hardware's, and its
// range of tile shapes and look-back depths, one case per tuning. (The checks every backend
// shares are in scan_suite_test.cpp; the validation kernel in validation_test.cpp.)
#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "scan_check.hpp"
#include "vulkan/bench_support.hpp"

namespace gpuscan::testing {
namespace {

template <class P>
class VulkanTestWithParam : public VulkanTest, public ::testing::WithParamInterface<P> {};

// Logical subgroups of 4 and 8 lanes (up to the hardware's), so that a device of wide
// subgroups proves the narrow ones' code paths.
class VulkanSubgroups : public VulkanTestWithParam<Algorithm> {};

TEST_P(VulkanSubgroups, LogicalSubgroupsOfFourAndEight) {
  const Algorithm algorithm = GetParam();
  for (std::uint32_t subgroup : {4u, 8u}) {
    if (subgroup > device().info().subgroup_size) {
      std::printf("note: logical subgroups of %u not run: the device's are %u lanes\n", subgroup,
                  device().info().subgroup_size);
      continue;
    }
    Options options;
    options.subgroup_size = subgroup;
    SCOPED_TRACE("logical subgroup " + std::to_string(subgroup));
    for (std::size_t n : {std::size_t{5}, std::size_t{4097}, std::size_t{100003}}) {
      expect_scan_matches(device(), {{DType::u32, Op::add, Kind::inclusive, algorithm}, options},
                          n);
      expect_scan_matches(device(), {{DType::u32, Op::max, Kind::exclusive, algorithm}, options},
                          n);
      expect_scan_matches(device(), {{DType::u64, Op::add, Kind::inclusive, algorithm}, options},
                          n);
    }
    if (algorithm != Algorithm::csdldf) continue;
    // Every tile blocked: the fallbacks' reductions on narrow subgroups too.
    options.blocking_mask = 0;
    expect_scan_matches(device(), {{DType::u32, Op::bit_xor, Kind::exclusive, algorithm}, options},
                        9 * 4096 + 1, Value::of(std::uint32_t{7}));
    expect_scan_matches(device(), {{DType::f64, Op::add, Kind::inclusive, algorithm}, options},
                        9 * 4096 + 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Vulkan, VulkanSubgroups, ::testing::ValuesIn(all_algorithms),
                         [](const auto& p) { return param_name(p.param); });

// Every tile-shape and look-back knob a benchmark can turn on Vulkan still gives exact
// results: one case per tuning, named after it, for every algorithm.
struct Tuned {
  const char* name;
  Options options;
};

std::vector<Tuned> vulkan_tunings() {
  std::vector<Tuned> tunings;
  const auto add = [&](const char* name, auto set) {
    Options options;
    set(options);
    tunings.push_back({name, options});
  };
  add("wg128_v8", [](Options& o) { o.workgroup_size = 128, o.vectors_per_thread = 8; });
  add("depth1", [](Options& o) { o.lookback_depth = 1; });
  add("depth3", [](Options& o) { o.lookback_depth = 3; });
  add("wg64_v1", [](Options& o) { o.workgroup_size = 64, o.vectors_per_thread = 1; });
  add("wg256_v8", [](Options& o) { o.workgroup_size = 256, o.vectors_per_thread = 8; });
  add("spins1_depth2", [](Options& o) { o.tuning.max_spins = 1, o.lookback_depth = 2; });
  add("split_spins1", [](Options& o) { o.tile_state = TileState::split, o.tuning.max_spins = 1; });
  return tunings;
}

void PrintTo(const Tuned& tuned, std::ostream* os) {
  *os << tuned.name;
}

class VulkanTunings : public VulkanTestWithParam<Tuned> {};

TEST_P(VulkanTunings, ResultsStayExact) {
  const Options& options = GetParam().options;
  for (Algorithm algorithm : all_algorithms) {
    SCOPED_TRACE(std::string(to_string(algorithm)));
    for (std::size_t n : {std::size_t{3}, std::size_t{70001}, std::size_t{1} << 20})
      expect_scan_matches(device(), {{DType::u32, Op::add, Kind::inclusive, algorithm}, options},
                          n);
    expect_scan_matches(device(), {{DType::u32, Op::max, Kind::exclusive, algorithm}, options},
                        9999, Value::of(std::uint32_t{77}));
  }
}

INSTANTIATE_TEST_SUITE_P(Vulkan, VulkanTunings, ::testing::ValuesIn(vulkan_tunings()),
                         [](const auto& p) { return std::string(p.param.name); });

// csdldf waits up to 64 x max_spins look-back steps before a fallback. llvmpipe cuts a
// loop that runs longer than its limit short, silently (the output is then wrong), so on a
// CPU driver the backend caps the wait (scan_kernels.cpp, csdldf_max_spins): a large
// max_spins must still give exact results there, every tile or some of them blocked.
TEST_F(VulkanTest, LargeMaxSpinsStayExactOnCpuDrivers) {
  if (!device().info().is_cpu()) {
    GTEST_SKIP() << "GPUs have no loop limit; their waits are as long as max_spins asks";
  }
  for (std::uint32_t spins : {20000u, 1u << 24}) {
    for (std::uint32_t mask : {0u, 1u, 7u}) {
      Options options;
      options.tuning.max_spins = spins;
      options.blocking_mask = mask;
      SCOPED_TRACE("max_spins " + std::to_string(spins) + " blocking mask " + std::to_string(mask));
      for (int run = 0; run < 3; ++run) {
        expect_scan_matches(device(),
                            {{DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf}, options},
                            64 * 4096 + 3);
      }
    }
  }
}

// The benchmarks' warm-up stops once the clock has stopped climbing (bench_support.hpp): a
// second busy and a run's time in two batches within 2%, or three seconds whatever they are.
TEST(VulkanBenchWarmUp, StopsOnceTheClockHasStoppedClimbing) {
  using seconds = std::chrono::duration<double>;
  EXPECT_FALSE(vulkan::warmed_up(seconds{0.5}, 1.0, 1.0)) << "under a second busy";
  EXPECT_TRUE(vulkan::warmed_up(seconds{1.2}, 1.0, 1.0));
  EXPECT_TRUE(vulkan::warmed_up(seconds{1.2}, 1.015, 1.0)) << "within 2%";
  EXPECT_TRUE(vulkan::warmed_up(seconds{1.2}, 0.985, 1.0)) << "within 2%";
  EXPECT_FALSE(vulkan::warmed_up(seconds{1.2}, 0.7, 1.0)) << "runs still getting faster";
  EXPECT_FALSE(vulkan::warmed_up(seconds{1.2}, 1.03, 1.0)) << "runs 3% slower";
  EXPECT_FALSE(vulkan::warmed_up(seconds{1.2}, 1.0, 0.0)) << "no batch before";
  EXPECT_TRUE(vulkan::warmed_up(seconds{3.0}, 0.5, 1.0)) << "three seconds whatever the runs";
}

// Shapes the Vulkan backend refuses.
TEST_F(VulkanTest, RefusesShapesItCannotRun) {
  const auto make = [&](const Options& options) {
    make_scanner(device(), {DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf}, options);
  };
  Options odd_workgroup;
  odd_workgroup.workgroup_size = 100;  // not a power of two
  EXPECT_THROW(make(odd_workgroup), UsageError);
  Options wide_subgroup;
  wide_subgroup.subgroup_size = 2 * device().info().subgroup_size;
  EXPECT_THROW(make(wide_subgroup), UsageError);
  Options vectors;
  vectors.vectors_per_thread = 65;
  EXPECT_THROW(make(vectors), UsageError);
  Options deep;
  deep.lookback_depth = 17;
  EXPECT_THROW(make(deep), UsageError);
}

}  // namespace
}  // namespace gpuscan::testing
