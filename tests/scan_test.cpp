// End-to-end scans on the Vulkan device against the CPU reference: every algorithm, odd
// sizes, blocking, logical subgroup sizes, operators, kinds, repeated runs.
#include <cstring>
#include <vector>

#include "core/reference.hpp"
#include "scan_check.hpp"

namespace gpuscan::testing {
namespace {

constexpr std::uint32_t poison = 0xDEADBEEFu;

std::vector<std::size_t> interesting_sizes() {
  // Around one and two default tiles of 32-bit types: 4096 elements, 6144 on Vulkan GPUs.
  std::vector<std::size_t> sizes{0, 1, 2, 3, 4, 5, 7919, 104729, 1000003};
  for (std::size_t t : {4096, 8192, 6144, 12288}) {
    for (std::size_t n = t - 1; n <= t + 1; ++n) sizes.push_back(n);
  }
  for (std::size_t k = 4; k <= 22; k += 3) {
    for (std::size_t n :
         {(std::size_t{1} << k) - 1, std::size_t{1} << k, (std::size_t{1} << k) + 1}) {
      sizes.push_back(n);
    }
  }
  return sizes;
}

class AlgorithmTest : public VulkanTest, public ::testing::WithParamInterface<Algorithm> {};

TEST_P(AlgorithmTest, InclusiveSumMatchesReferenceAtEverySize) {
  for (std::size_t n : interesting_sizes()) {
    expect_scan_matches({{DType::u32, Op::add, Kind::inclusive, GetParam()}, {}}, n);
  }
}

// One run of `scanner` over a fresh random input of n elements in `in`, checked exactly.
void expect_run_matches(Device& device, Scanner& scanner, Buffer& in, Buffer& out, std::size_t n) {
  const std::uint64_t seed = next_seed();
  SCOPED_TRACE("n " + std::to_string(n) + " seed=" + std::to_string(seed));
  const auto bytes = reference::random_input(DType::u32, Op::add, n, seed);
  std::vector<std::uint32_t> input(n), result(n, poison);
  std::memcpy(input.data(), bytes.data(), bytes.size());
  device.upload(in, bytes);
  run_with_progress_retries(scanner, [&] {
    device.upload(out, std::as_bytes(std::span(result)));
    scanner.run(in, out, n);
  });
  device.download(out, std::as_writable_bytes(std::span(result)));
  EXPECT_EQ(result, reference::scan<std::uint32_t>(Kind::inclusive, Op::add, input));
}

TEST_P(AlgorithmTest, RepeatedRunsOnTheSameBuffersStayCorrect) {
  Device& device = test_device();
  Scanner scanner(device, {DType::u32, Op::add, Kind::inclusive, GetParam()});
  const std::size_t n = 3 * 4096 + 17;
  Buffer in = device.allocate(n * 4);
  Buffer out = device.allocate(n * 4);
  for (int run = 0; run < 4; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    expect_run_matches(device, scanner, in, out, n);
  }
}

// A chained run works in one half of the spine and clears what the run before it left in
// the other (docs/protocol.md): runs of growing and shrinking sizes on one scanner must
// each find their half all NOT_READY.
TEST_P(AlgorithmTest, RunsOfChangingSizesFindTheirSpineCleared) {
  Device& device = test_device();
  Scanner scanner(device, {DType::u32, Op::add, Kind::inclusive, GetParam()});
  constexpr std::size_t tile = 4096;  // the tile of CPU drivers; on a GPU 6144
  const std::vector<std::size_t> sizes{20 * tile + 3, tile, 3 * tile - 1, 20 * tile,
                                       7 * tile + 5,  2,    12 * tile};
  Buffer in = device.allocate(sizes.front() * 4);
  Buffer out = device.allocate(sizes.front() * 4);
  for (const std::size_t n : sizes) expect_run_matches(device, scanner, in, out, n);
}

TEST_P(AlgorithmTest, EveryOperatorAndKindWithInit) {
  for (Op op : {Op::add, Op::mul, Op::min, Op::max, Op::bit_and, Op::bit_or, Op::bit_xor}) {
    for (Kind kind : {Kind::inclusive, Kind::exclusive, Kind::reduce}) {
      for (std::size_t n : {std::size_t{1}, std::size_t{4095}, std::size_t{3 * 4096 + 5}}) {
        expect_scan_matches({{DType::u32, op, kind, GetParam()}, {}}, n, 12345u);
      }
    }
  }
}

TEST_P(AlgorithmTest, LogicalSubgroupsOfFourAndEight) {
  for (std::uint32_t subgroup : {4u, 8u}) {
    if (subgroup > test_device().info().subgroup_size) continue;
    Options tuning;
    tuning.subgroup_size = subgroup;
    for (std::size_t n : {std::size_t{5}, std::size_t{4097}, std::size_t{100003}}) {
      expect_scan_matches({{DType::u32, Op::add, Kind::inclusive, GetParam()}, tuning}, n);
      expect_scan_matches({{DType::u32, Op::max, Kind::exclusive, GetParam()}, tuning}, n);
    }
  }
}

// Every tile-shape and look-back knob a benchmark can turn still gives exact results.
TEST_P(AlgorithmTest, EveryTuningKnobKeepsResultsExact) {
  std::vector<Options> tunings(7);
  tunings[1].lookback_depth = 1;
  tunings[2].lookback_depth = 3;
  tunings[3].workgroup_size = 64;
  tunings[3].vectors_per_thread = 1;
  tunings[4].workgroup_size = 256;
  tunings[4].vectors_per_thread = 8;
  tunings[0].workgroup_size = 128;
  tunings[0].vectors_per_thread = 8;
  tunings[5].tuning.max_spins = 1;
  tunings[5].lookback_depth = 2;
  tunings[6].tile_state = TileState::split;
  tunings[6].tuning.max_spins = 1;
  for (const Options& tuning : tunings) {
    SCOPED_TRACE("workgroup " + std::to_string(tuning.workgroup_size) + " vectors " +
                 std::to_string(tuning.vectors_per_thread) + " depth " +
                 std::to_string(tuning.lookback_depth));
    for (std::size_t n : {std::size_t{3}, std::size_t{70001}, std::size_t{1} << 20}) {
      expect_scan_matches({{DType::u32, Op::add, Kind::inclusive, GetParam()}, tuning}, n);
    }
    expect_scan_matches({{DType::u32, Op::max, Kind::exclusive, GetParam()}, tuning}, 9999, 77u);
  }
}

INSTANTIATE_TEST_SUITE_P(Vulkan, AlgorithmTest,
                         ::testing::Values(Algorithm::csdldf, Algorithm::csdl, Algorithm::rts),
                         [](const auto& param_info) {
                           return std::string(to_string(param_info.param));
                         });

class FallbackTest : public VulkanTest {};

// Tiles that never post their aggregate force every successor into the fallback; the
// result must stay exact at every blocking rate, with one or many look-back reads.
// Tiles in dispatch order, without the tile counter: correct whatever order the device
// starts workgroups in, because a look-back falls back on a tile nobody has started.
TEST_F(FallbackTest, DispatchOrderTilesStayExact) {
  Options tuning;
  tuning.dispatch_order = true;
  if (test_device().info().is_cpu()) {
    // Refused there: a CPU driver may run the grid's halves on two threads from both ends,
    // and llvmpipe silently cuts the long fallback chains that follows (seen in CI).
    EXPECT_THROW(
        make_scanner(test_device(), {DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf}, tuning),
        UsageError);
    GTEST_SKIP() << "dispatch-order tiles are for GPUs (refusal checked above)";
  }
  for (std::size_t n :
       {std::size_t{1}, std::size_t{4097}, std::size_t{1} << 20, (std::size_t{1} << 22) + 3}) {
    expect_scan_matches({{DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf}, tuning}, n);
  }
  tuning.blocking_mask = 1;
  expect_scan_matches({{DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf}, tuning}, 100003);
  EXPECT_THROW(
      make_scanner(test_device(), {DType::u32, Op::add, Kind::inclusive, Algorithm::csdl}, tuning),
      UsageError);
}

TEST_F(FallbackTest, DecoupledLookBackWithBlockingIsRefused) {
  Options tuning;
  tuning.blocking_mask = 1;
  EXPECT_THROW(
      make_scanner(test_device(), {DType::u32, Op::add, Kind::inclusive, Algorithm::csdl}, tuning),
      UsageError);
}

TEST_F(FallbackTest, StatisticsCountWhatTheLookBackDid) {
  expect_statistics_invariants(test_device(), 256, 5);
}

TEST_F(FallbackTest, ExactUnderSimulatedBlockingAtEveryRate) {
  for_each_blocking_rate([](const Options& tuning) {
    expect_scan_matches({{DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf}, tuning},
                        40 * 4096 + 3);
  });
  Options tuning;
  tuning.blocking_mask = 0;
  tuning.subgroup_size = 4;
  expect_scan_matches({{DType::u32, Op::bit_xor, Kind::exclusive, Algorithm::csdldf}, tuning},
                      9 * 4096 + 1, 7u);
}

}  // namespace
}  // namespace gpuscan::testing
