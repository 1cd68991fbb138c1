// The CUDA backend against the CPU reference: every type, operator, kind and algorithm,
// sizes around tiles, both tile states and several block sizes, simulated blocking at
// every rate, statistics, the benchmark with CUB, and more than 2^32 elements. Needs a
// CUDA GPU; where there is none (CI) every test skips and says why.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "scan_check.hpp"

namespace gpuscan::testing {
namespace {

// The CUDA GPU of the run (GPUSCAN_TEST_DEVICE picks one by name), or why there is none.
struct CudaUnderTest {
  std::optional<Device> device;
  std::string missing;
};

CudaUnderTest& cuda_under_test() {
  static CudaUnderTest under_test = [] {
    CudaUnderTest result;
    const char* name = std::getenv("GPUSCAN_TEST_DEVICE");
    try {
      result.device = Device::open(Backend::cuda, name ? name : "");
      std::printf("CUDA test device: %s (%s)\n", result.device->info().name.c_str(),
                  result.device->info().driver.c_str());
    } catch (const DeviceError& e) {
      result.missing = e.what();
    }
    return result;
  }();
  return under_test;
}

class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_under_test().device)
      GTEST_SKIP() << "needs a CUDA GPU: " << cuda_under_test().missing;
  }
  Device& device() { return *cuda_under_test().device; }
  void expect_matches(const Case& c, std::size_t n, std::optional<Value> init = {}) {
    expect_scan_matches_on(device(), c, n, init);
  }
};

std::vector<Op> ops_of(DType dtype) {
  if (is_float(dtype)) return {Op::add, Op::mul, Op::min, Op::max};
  return {Op::add, Op::mul, Op::min, Op::max, Op::bit_and, Op::bit_or, Op::bit_xor};
}

constexpr DType all_dtypes[] = {DType::u32, DType::i32, DType::f32,
                                DType::u64, DType::i64, DType::f64};
constexpr Algorithm all_algorithms[] = {Algorithm::csdldf, Algorithm::csdl, Algorithm::rts};

Value three(DType dtype) {
  return reference::visit(dtype, [](auto tag) { return Value::of(static_cast<decltype(tag)>(3)); });
}

TEST_F(CudaTest, EveryTypeOperatorKindAndAlgorithmMatchesTheReference) {
  for (DType dtype : all_dtypes) {
    for (Op op : ops_of(dtype)) {
      for (Kind kind : {Kind::inclusive, Kind::exclusive, Kind::reduce}) {
        for (Algorithm algorithm : all_algorithms) {
          const Case c{{dtype, op, kind, algorithm}, {}};
          for (std::size_t n : {std::size_t{1}, std::size_t{4097}, (std::size_t{1} << 18) + 3}) {
            expect_matches(c, n);
          }
          expect_matches(c, 10007, three(dtype));
        }
      }
    }
  }
}

TEST_F(CudaTest, SizesAroundTilesPrimesAndPowersOfTwo) {
  std::vector<std::size_t> sizes = {0, 1, 2, 3, 4, 5, 7919, 104729, 1299709};
  const std::size_t tile = 256 * 16;  // the default shape of every type: 16 elements a thread
  for (std::size_t n = tile - 1; n <= tile + 1; ++n) sizes.push_back(n);
  for (std::size_t n = 2 * tile - 1; n <= 2 * tile + 1; ++n) sizes.push_back(n);
  for (int k = 10; k <= 24; k += 2) {
    for (std::size_t n :
         {(std::size_t{1} << k) - 1, std::size_t{1} << k, (std::size_t{1} << k) + 1})
      sizes.push_back(n);
  }
  for (Algorithm algorithm : all_algorithms) {
    for (std::size_t n : sizes) {
      expect_matches({{DType::u32, Op::add, Kind::inclusive, algorithm}, {}}, n);
      expect_matches({{DType::u64, Op::add, Kind::exclusive, algorithm}, {}}, n);
    }
  }
}

// One Scanner, many runs: each run clears the tile state of the next, across sizes that
// grow and shrink the spine.
TEST_F(CudaTest, RepeatedRunsOnTheSameScannerStayCorrect) {
  for (Algorithm algorithm : all_algorithms) {
    Scanner scanner(device(), {DType::u32, Op::add, Kind::inclusive, algorithm});
    const std::size_t largest = std::size_t{1} << 22;
    Buffer in = device().allocate(largest * 4), out = device().allocate(largest * 4);
    for (std::size_t n : {largest, std::size_t{5000}, std::size_t{1} << 20, largest - 3,
                          std::size_t{1}, std::size_t{300000}, largest}) {
      const std::uint64_t seed = next_seed();
      SCOPED_TRACE("n=" + std::to_string(n) + " seed=" + std::to_string(seed) + " " +
                   std::string(to_string(algorithm)));
      const auto bytes = reference::random_input(DType::u32, Op::add, n, seed);
      std::vector<std::uint32_t> input(n), result(n, 0xA5A5A5A5u);
      std::memcpy(input.data(), bytes.data(), bytes.size());
      device().upload(in, bytes);
      device().upload(out, std::as_bytes(std::span(result)));
      scanner.run(in, out, n);
      device().download(out, std::as_writable_bytes(std::span(result)));
      EXPECT_EQ(result, reference::scan<std::uint32_t>(Kind::inclusive, Op::add, input));
    }
  }
}

// Every tile shape, look-back depth and tile order the kernels are compiled or tuned for.
// Depth 0 lets the launch pick (all the tiles' windows where they fit in 4 and every block is
// resident: 3 windows for u32 at n = 300001).
TEST_F(CudaTest, EveryTileShapeAndLookBackStaysExact) {
  {
    for (std::uint32_t rows : {4u, 6u, 8u}) {
      for (std::uint32_t depth : {0u, 1u, 2u, 3u, 4u}) {
        for (bool ordered : {false, true}) {
          Options tuning;
          tuning.vectors_per_thread = rows;
          tuning.lookback_depth = depth;
          tuning.dispatch_order = ordered;
          tuning.tuning.max_spins = std::max(depth, 1u);  // short waits: fallbacks happen too
          SCOPED_TRACE("rows " + std::to_string(rows) + " depth " + std::to_string(depth) +
                       (ordered ? " dispatch order" : ""));
          for (std::size_t n :
               {std::size_t{5}, std::size_t{8193}, std::size_t{300001}, std::size_t{1} << 22}) {
            expect_matches({{DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf}, tuning}, n);
            expect_matches({{DType::f64, Op::add, Kind::exclusive, Algorithm::csdldf}, tuning}, n);
          }
          tuning.dispatch_order = false;
          expect_matches({{DType::u64, Op::mul, Kind::reduce, Algorithm::csdl}, tuning}, 300001);
          expect_matches({{DType::i32, Op::max, Kind::inclusive, Algorithm::rts}, tuning}, 300001);
        }
      }
    }
  }
}

TEST_F(CudaTest, BothTileStatesAndEveryBlockSizeStayExact) {
  for (TileState state : {TileState::split, TileState::packed}) {
    // Blocks of a tile each have up to 512 threads.
    {
      for (std::uint32_t block : {64u, 128u, 224u, 256u, 512u}) {
        Options tuning;
        tuning.tile_state = state;
        tuning.workgroup_size = block;
        tuning.vectors_per_thread = 4;
        SCOPED_TRACE("block " + std::to_string(block) +
                     (state == TileState::split ? " split" : " packed"));
        for (std::size_t n : {std::size_t{3}, std::size_t{70001}, std::size_t{1} << 22}) {
          expect_matches({{DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf}, tuning}, n);
          expect_matches({{DType::f32, Op::max, Kind::exclusive, Algorithm::csdl}, tuning}, n);
        }
        expect_matches({{DType::i64, Op::add, Kind::inclusive, Algorithm::csdldf}, tuning}, 999999);
        expect_matches({{DType::f64, Op::min, Kind::exclusive, Algorithm::csdl}, tuning}, 70001);
      }
    }
  }
}

// The policy's shapes change with the input's size: 16 KB tiles below 8 MiB (cuda/policy.cpp).
// Just below and past the switch, for 32- and 64-bit types.
TEST_F(CudaTest, InputsStayExactOnBothSidesOfTheShapeSwitches) {
  for (std::size_t n : {(std::size_t{1} << 21) - 3, (std::size_t{1} << 21) + 5,
                        (std::size_t{1} << 20) - 3, (std::size_t{1} << 20) + 5}) {
    SCOPED_TRACE("n " + std::to_string(n));
    Options tuning;
    expect_matches({{DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf}, tuning}, n);
    expect_matches({{DType::f32, Op::add, Kind::exclusive, Algorithm::csdldf}, tuning}, n);
    expect_matches({{DType::i64, Op::max, Kind::reduce, Algorithm::csdl}, tuning}, n);
    tuning.blocking_mask = 1;  // every other tile
    tuning.tuning.max_spins = 1;
    expect_matches({{DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf}, tuning}, n);
    expect_matches({{DType::f64, Op::add, Kind::inclusive, Algorithm::csdldf}, tuning}, n);
  }
}

TEST_F(CudaTest, ExactUnderSimulatedBlockingAtEveryRate) {
  for_each_blocking_rate([&](Options tuning) {
    for (TileState state : {TileState::split, TileState::packed}) {
      tuning.tile_state = state;
      expect_matches({{DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf}, tuning},
                     (std::size_t{1} << 20) + 3);
      expect_matches({{DType::u64, Op::bit_xor, Kind::exclusive, Algorithm::csdldf}, tuning},
                     300007, three(DType::u64));
    }
    tuning.tile_state = TileState::automatic;
    // Floats: owner and fallbacks must post the same bits, or the split words mix.
    expect_matches({{DType::f32, Op::add, Kind::inclusive, Algorithm::csdldf}, tuning}, 500001);
    expect_matches({{DType::f64, Op::add, Kind::inclusive, Algorithm::csdldf}, tuning}, 500001);
  });
}

// Inputs that span several rounds of the grid (more tiles than the device holds blocks at
// once), so that fallbacks meet tiles whose blocks have not started.
TEST_F(CudaTest, ExactUnderBlockingOverManyRoundsOfTheGrid) {
  const std::size_t n = 6'000'011;
  for (std::uint32_t mask : {0u, 1u, 7u}) {
    for (std::uint32_t spins : {1u, 4u}) {
      Options tuning;
      tuning.blocking_mask = mask;
      tuning.tuning.max_spins = spins;
      SCOPED_TRACE("blocking mask " + std::to_string(mask) + " spins " + std::to_string(spins));
      for (TileState state : {TileState::split, TileState::packed}) {
        tuning.tile_state = state;
        expect_matches({{DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf}, tuning}, n);
        expect_matches({{DType::u64, Op::bit_xor, Kind::exclusive, Algorithm::csdldf}, tuning}, n,
                       three(DType::u64));
      }
      tuning.tile_state = TileState::automatic;
      expect_matches({{DType::f32, Op::add, Kind::inclusive, Algorithm::csdldf}, tuning}, n);
      expect_matches({{DType::f64, Op::mul, Kind::exclusive, Algorithm::csdldf}, tuning}, n);
      expect_matches({{DType::i32, Op::max, Kind::reduce, Algorithm::csdldf}, tuning}, n);
    }
  }
}

TEST_F(CudaTest, StatisticsCountWhatTheLookBackDid) {
  expect_statistics_invariants(device(), 4096, 1);
}

TEST_F(CudaTest, BenchmarkValidatesEveryRunOfEveryImplementation) {
  BenchCase c;
  c.n = (std::size_t{1} << 20) + 7;
  c.runs = 3;
  c.seed = next_seed();
  for (DType dtype : {DType::u32, DType::f32, DType::u64, DType::f64}) {
    for (Kind kind : {Kind::inclusive, Kind::exclusive, Kind::reduce}) {
      c.dtype = dtype;
      c.kind = kind;
      c.implementations = {Implementation::csdldf, Implementation::csdl, Implementation::rts,
                           Implementation::memcpy, Implementation::cub};
      // Every shape applies to every implementation (memcpy and CUB ignore it).
      for (std::uint32_t rows : {0u, 6u}) {
        c.options.vectors_per_thread = rows;
        for (const auto& r : benchmark(device(), c)) {
          EXPECT_EQ(r.validated, 3) << to_string(r.implementation) << " " << to_string(dtype) << " "
                                    << to_string(kind) << " rows " << rows << " seed=" << c.seed;
          for (double ms : r.ms) EXPECT_GT(ms, 0.0);
        }
      }
    }
  }
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
      EXPECT_EQ(r.validated, 3) << to_string(r.implementation) << " " << to_string(dtype)
                                << " seed=" << c.seed;
    }
  }
}

// Benchmark runs under blocking validate too; CUB is refused where it cannot compute the case.
TEST_F(CudaTest, BenchmarkUnderBlockingAndCubOnlyForSums) {
  BenchCase c;
  c.n = 100000;
  c.runs = 2;
  c.seed = next_seed();
  c.options.blocking_mask = 0;  // every tile blocked ...
  c.options.tuning.max_spins = 1;
  c.implementations = {Implementation::csdldf};
  for (const auto& r : benchmark(device(), c)) EXPECT_EQ(r.validated, 2);
  c.op = Op::mul;  // ... and a baseline that cannot compute this case is refused
  c.implementations = {Implementation::cub};
  EXPECT_THROW(benchmark(device(), c), UsageError);
}

TEST_F(CudaTest, RefusesWhatItCannotDo) {
  const auto make = [&](Algorithm algorithm, DType dtype, const Options& tuning) {
    Scanner scanner = make_scanner(device(), {dtype, Op::add, Kind::inclusive, algorithm}, tuning);
  };
  Options blocking;
  blocking.blocking_mask = 1;
  EXPECT_THROW(make(Algorithm::csdl, DType::u32, blocking), UsageError);
  Options odd_block;
  odd_block.workgroup_size = 100;
  EXPECT_THROW(make(Algorithm::csdldf, DType::u32, odd_block), UsageError);
  Options logical;
  logical.subgroup_size = 8;
  EXPECT_THROW(make(Algorithm::csdldf, DType::u32, logical), UsageError);
  Options ordered;
  ordered.dispatch_order = true;
  EXPECT_THROW(make(Algorithm::csdl, DType::u32, ordered), UsageError);
  Options deep;
  deep.lookback_depth = 5;
  EXPECT_THROW(make(Algorithm::csdldf, DType::u32, deep), UsageError);
  Options rows;
  rows.vectors_per_thread = 5;
  EXPECT_THROW(make(Algorithm::rts, DType::u32, rows), UsageError);
  Options large_block;  // a block of a tile has at most 512 threads
  large_block.workgroup_size = 1024;
  large_block.vectors_per_thread = 4;
  EXPECT_THROW(make(Algorithm::csdldf, DType::u32, large_block), UsageError);
  Options wide;
  wide.vectors_per_thread = 8;
  wide.workgroup_size = 1024;
  EXPECT_THROW(make(Algorithm::csdldf, DType::u32, wide), UsageError);
  EXPECT_THROW(make(Algorithm::rts, DType::u32, wide), UsageError);  // 8 rows: 512 threads
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
