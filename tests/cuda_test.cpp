// What only the CUDA backend has: its tile shapes (4, 6 or 8 rows of 16-byte vectors),
// look-back depths and tile orders, one case per tuning; block sizes in both tile states;
// the policy's shape switch; inputs of many rounds of the grid; the benchmark with CUB and
// warm code; its refusals; and more than 2^32 elements. (The checks every backend shares
// are in scan_suite_test.cpp.) Needs a CUDA GPU; where there is none every test skips and
// says why.
#include <algorithm>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "scan_check.hpp"

namespace gpuscan::testing {
namespace {

class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!has_device(Backend::cuda)) GTEST_SKIP() << why_no_device(Backend::cuda);
  }
  Device& device() { return *device_under_test(Backend::cuda).device; }
  void expect_matches(const Case& c, std::size_t n, std::optional<Value> init = {}) {
    expect_scan_matches(device(), c, n, init);
  }
};

template <class P>
class CudaTestWithParam : public CudaTest, public ::testing::WithParamInterface<P> {};

// Every tile shape, look-back depth and tile order the kernels are compiled or tuned for,
// one case each. Depth 0 lets the launch pick (all the tiles' windows where they fit in 4
// and every block is resident: 3 windows for u32 at n = 300001). Short waits
// (max_spins = depth) make fallbacks happen too.
class CudaTileShapes : public CudaTestWithParam<std::tuple<std::uint32_t, std::uint32_t, bool>> {};

TEST_P(CudaTileShapes, ResultsStayExact) {
  const auto [rows, depth, ordered] = GetParam();
  Options options;
  options.vectors_per_thread = rows;
  options.lookback_depth = depth;
  options.dispatch_order = ordered;
  options.tuning.max_spins = std::max(depth, 1u);
  for (std::size_t n :
       {std::size_t{5}, std::size_t{8193}, std::size_t{300001}, std::size_t{1} << 22}) {
    expect_matches({{DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf}, options}, n);
    expect_matches({{DType::f64, Op::add, Kind::exclusive, Algorithm::csdldf}, options}, n);
  }
  options.dispatch_order = false;  // refused for csdl
  expect_matches({{DType::u64, Op::mul, Kind::reduce, Algorithm::csdl}, options}, 300001);
  expect_matches({{DType::i32, Op::max, Kind::inclusive, Algorithm::rts}, options}, 300001);
}

INSTANTIATE_TEST_SUITE_P(Cuda, CudaTileShapes,
                         ::testing::Combine(::testing::Values(4u, 6u, 8u),
                                            ::testing::Values(0u, 1u, 2u, 3u, 4u),
                                            ::testing::Bool()),
                         [](const auto& p) {
                           return "rows" + std::to_string(std::get<0>(p.param)) + "_depth" +
                                  std::to_string(std::get<1>(p.param)) +
                                  (std::get<2>(p.param) ? "_dispatch_order" : "_counter_order");
                         });

// Blocks of a tile have 64 to 512 threads, in both tile states.
class CudaBlockSizes : public CudaTestWithParam<std::tuple<TileState, std::uint32_t>> {};

TEST_P(CudaBlockSizes, ResultsStayExact) {
  const auto [state, block] = GetParam();
  Options options;
  options.tile_state = state;
  options.workgroup_size = block;
  options.vectors_per_thread = 4;
  for (std::size_t n : {std::size_t{3}, std::size_t{70001}, std::size_t{1} << 22}) {
    expect_matches({{DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf}, options}, n);
    expect_matches({{DType::f32, Op::max, Kind::exclusive, Algorithm::csdl}, options}, n);
  }
  expect_matches({{DType::i64, Op::add, Kind::inclusive, Algorithm::csdldf}, options}, 999999);
  expect_matches({{DType::f64, Op::min, Kind::exclusive, Algorithm::csdl}, options}, 70001);
}

INSTANTIATE_TEST_SUITE_P(Cuda, CudaBlockSizes,
                         ::testing::Combine(::testing::Values(TileState::split, TileState::packed),
                                            ::testing::Values(64u, 128u, 224u, 256u, 512u)),
                         [](const auto& p) {
                           return std::string(std::get<0>(p.param) == TileState::split ? "split"
                                                                                       : "packed") +
                                  "_block" + std::to_string(std::get<1>(p.param));
                         });

// The policy's shapes change with the input's size: 16 KB tiles below 8 MiB (cuda/policy.cpp).
// Just below and past the switch, for 32- and 64-bit types.
TEST_F(CudaTest, InputsStayExactOnBothSidesOfTheShapeSwitch) {
  for (std::size_t n : {(std::size_t{1} << 21) - 3, (std::size_t{1} << 21) + 5,
                        (std::size_t{1} << 20) - 3, (std::size_t{1} << 20) + 5}) {
    SCOPED_TRACE("n " + std::to_string(n));
    Options options;
    expect_matches({{DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf}, options}, n);
    expect_matches({{DType::f32, Op::add, Kind::exclusive, Algorithm::csdldf}, options}, n);
    expect_matches({{DType::i64, Op::max, Kind::reduce, Algorithm::csdl}, options}, n);
    options.blocking_mask = 1;  // every other tile
    options.tuning.max_spins = 1;
    expect_matches({{DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf}, options}, n);
    expect_matches({{DType::f64, Op::add, Kind::inclusive, Algorithm::csdldf}, options}, n);
  }
}

// Inputs that span several rounds of the grid (more tiles than the device holds blocks at
// once), so that fallbacks meet tiles whose blocks have not started; one case per blocking
// mask and wait.
class CudaGridRounds : public CudaTestWithParam<std::tuple<std::uint32_t, std::uint32_t>> {};

TEST_P(CudaGridRounds, ExactUnderBlocking) {
  const auto [mask, spins] = GetParam();
  const std::size_t n = 6'000'011;
  Options options;
  options.blocking_mask = mask;
  options.tuning.max_spins = spins;
  for (TileState state : {TileState::split, TileState::packed}) {
    options.tile_state = state;
    SCOPED_TRACE(state == TileState::split ? "split" : "packed");
    expect_matches({{DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf}, options}, n);
    expect_matches({{DType::u64, Op::bit_xor, Kind::exclusive, Algorithm::csdldf}, options}, n,
                   some_init(DType::u64));
  }
  options.tile_state = TileState::automatic;
  expect_matches({{DType::f32, Op::add, Kind::inclusive, Algorithm::csdldf}, options}, n);
  expect_matches({{DType::f64, Op::mul, Kind::exclusive, Algorithm::csdldf}, options}, n);
  expect_matches({{DType::i32, Op::max, Kind::reduce, Algorithm::csdldf}, options}, n);
}

INSTANTIATE_TEST_SUITE_P(Cuda, CudaGridRounds,
                         ::testing::Combine(::testing::Values(0u, 1u, 7u),
                                            ::testing::Values(1u, 4u)),
                         [](const auto& p) {
                           return "mask" + std::to_string(std::get<0>(p.param)) + "_spins" +
                                  std::to_string(std::get<1>(p.param));
                         });

// The benchmark with the kernels' other shape, and with CUB: every run of every
// implementation validated (the shared suite runs the default shape).
TEST_F(CudaTest, BenchmarkWithSixRowsValidatesEveryRun) {
  BenchCase c;
  c.n = (std::size_t{1} << 20) + 7;
  c.runs = 3;
  c.seed = next_seed();
  c.options.vectors_per_thread = 6;  // memcpy and CUB ignore it
  c.implementations = {Implementation::csdldf, Implementation::csdl, Implementation::rts,
                       Implementation::memcpy, Implementation::cub};
  expect_benchmark_validates(device(), c);
}

// With the code warmed by an untimed run on a second input before each timed run, every
// timed run is still validated (the spine takes turns through the untimed runs as well).
TEST_F(CudaTest, BenchmarkWithWarmCodeValidatesEveryRun) {
  BenchCase c;
  c.n = 300007;
  c.runs = 3;
  c.seed = next_seed();
  c.warm_code = true;
  c.implementations = {Implementation::csdldf, Implementation::csdl, Implementation::rts,
                       Implementation::memcpy, Implementation::cub};
  for (DType dtype : {DType::u32, DType::u64}) {
    c.dtype = dtype;
    for (const auto& r : benchmark(device(), c)) {
      SCOPED_TRACE(std::string(to_string(r.implementation)) + " " + std::string(to_string(dtype)) +
                   " seed=" + std::to_string(c.seed));
      EXPECT_EQ(r.validated + r.abandoned, 3);
      if (r.implementation != Implementation::csdl) {
        EXPECT_EQ(r.abandoned, 0);
      }
    }
  }
}

// CUB is refused where it cannot compute the case.
TEST_F(CudaTest, BenchmarkRunsCubForSumsOnly) {
  BenchCase c;
  c.n = 100000;
  c.runs = 2;
  c.seed = next_seed();
  c.op = Op::mul;
  c.implementations = {Implementation::cub};
  EXPECT_THROW(benchmark(device(), c), UsageError);
}

TEST_F(CudaTest, RefusesWhatItCannotDo) {
  const auto make = [&](Algorithm algorithm, const Options& options) {
    make_scanner(device(), {DType::u32, Op::add, Kind::inclusive, algorithm}, options);
  };
  Options odd_block;
  odd_block.workgroup_size = 100;
  EXPECT_THROW(make(Algorithm::csdldf, odd_block), UsageError);
  Options logical;
  logical.subgroup_size = 8;
  EXPECT_THROW(make(Algorithm::csdldf, logical), UsageError);
  Options deep;
  deep.lookback_depth = 5;
  EXPECT_THROW(make(Algorithm::csdldf, deep), UsageError);
  Options rows;
  rows.vectors_per_thread = 5;
  EXPECT_THROW(make(Algorithm::rts, rows), UsageError);
  Options large_block;  // a block of a tile has at most 512 threads
  large_block.workgroup_size = 1024;
  large_block.vectors_per_thread = 4;
  EXPECT_THROW(make(Algorithm::csdldf, large_block), UsageError);
  Options wide;
  wide.vectors_per_thread = 8;
  wide.workgroup_size = 1024;
  EXPECT_THROW(make(Algorithm::csdldf, wide), UsageError);
  EXPECT_THROW(make(Algorithm::rts, wide), UsageError);  // 8 rows: 512 threads
  // Batched and segmented kernels of 4-byte types exist for 6 rows a thread only; other
  // shapes still scan flat.
  Options four;
  four.vectors_per_thread = 4;
  Scanner scanner = make_scanner(device(), {DType::u32, Op::add, Kind::inclusive}, four);
  Buffer in = device().allocate(4096 * 4), out = device().allocate(4096 * 4);
  const std::vector<std::uint32_t> zeros(4096, 0);
  device().upload(in, std::as_bytes(std::span(zeros)));
  EXPECT_THROW(scanner.run_rows(in, out, 4, 1024), UsageError);
  const std::int64_t offsets[] = {0, 100, 4096};
  EXPECT_THROW(scanner.run_segments(in, out, offsets), UsageError);
  EXPECT_NO_THROW(scanner.run(in, out, 4096));
}

// 64-bit offsets: 2^32 + 4101 elements (17 GB in, 17 GB out), checked on the host.
TEST_F(CudaTest, MoreThanTwoToTheThirtyTwoElements) {
  const std::size_t n = (std::size_t{1} << 32) + 4101;
  const std::size_t bytes = n * sizeof(std::uint32_t);
  std::optional<Buffer> in, out;
  try {
    in = device().allocate(bytes);
    out = device().allocate(bytes);
  } catch (const DeviceError& e) {
    GTEST_SKIP() << "needs 2 x " << bytes / (1 << 20) << " MiB of device memory: " << e.what();
  }
  const std::uint64_t seed = next_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::vector<std::uint32_t> data(n);
  for (std::size_t i = 0; i < n; ++i)
    data[i] = static_cast<std::uint32_t>((i * 2654435761u + seed) >> 7);
  device().upload(*in, std::as_bytes(std::span(data)));
  for (Algorithm algorithm : {Algorithm::csdldf, Algorithm::rts}) {
    SCOPED_TRACE(std::string(to_string(algorithm)));
    Scanner scanner(device(), {DType::u32, Op::add, Kind::inclusive, algorithm});
    scanner.run(*in, *out, n);
    std::vector<std::uint32_t> result(n);
    device().download(*out, std::as_writable_bytes(std::span(result)));
    std::uint32_t acc = 0;
    std::size_t wrong = 0, first_wrong = n;
    for (std::size_t i = 0; i < n; ++i) {
      acc += data[i];
      if (result[i] != acc && wrong++ == 0) first_wrong = i;
    }
    EXPECT_EQ(wrong, 0u) << "first wrong element " << first_wrong;
  }
}

}  // namespace
}  // namespace gpuscan::testing
