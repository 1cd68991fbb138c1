// The scan checks every backend must pass, one suite instantiated per backend of the build
// (Vulkan/..., and Cuda/... where built with CUDA; an instance without a device skips and
// says why): every dtype x op x kind x algorithm against the CPU reference at DESIGN's sizes
// (section 6), init values, simulated blocking at every rate in both tile states, the
// statistics' invariants, repeated runs on one Scanner, chunked runs, refusals, and the
// benchmark's validation of every run.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "scan_check.hpp"

namespace gpuscan::testing {
namespace {

// Sizes a CPU driver runs in seconds go up to 2^22 (DESIGN, section 6); GPUs go further.
std::size_t largest_size(Device& device) {
  return device.info().is_cpu() ? std::size_t{1} << 22 : std::size_t{1} << 24;
}

// ---------------------------------------------------------------------------------------
// Every operator and kind of every dtype, with and without an init value, per algorithm.

class ScanTypes : public BackendTest<DType, Algorithm> {
 protected:
  DType dtype() const { return std::get<1>(GetParam()); }
  Algorithm algorithm() const { return std::get<2>(GetParam()); }
};

TEST_P(ScanTypes, EveryOperatorAndKindMatchesTheReference) {
  // Sizes of one to many tiles; CPU drivers stop at 16 tiles, GPUs go to 64 and more.
  const std::size_t many = is_cpu() ? (std::size_t{1} << 16) + 3 : (std::size_t{1} << 18) + 3;
  for (Op op : ops_of(dtype())) {
    for (Kind kind : all_kinds) {
      const Case c{{dtype(), op, kind, algorithm()}, {}};
      for (std::size_t n : {std::size_t{1}, std::size_t{4097}, std::size_t{3 * 4096 + 5}, many})
        expect_scan_matches(device(), c, n);
      expect_scan_matches(device(), c, 10007, some_init(dtype()));
    }
  }
}

GPUSCAN_INSTANTIATE_FOR_BACKENDS(ScanTypes, ::testing::ValuesIn(all_dtypes),
                                 ::testing::ValuesIn(all_algorithms));

// ---------------------------------------------------------------------------------------
// Float values where an identity that is not one shows (core/monoid.hpp): signed zeros
// through sums, NaNs through min and max, over one tile and several.

class ScanFloatEdges : public BackendTest<DType, Algorithm> {
 protected:
  DType dtype() const { return std::get<1>(GetParam()); }
  Algorithm algorithm() const { return std::get<2>(GetParam()); }

  // The scan of `input` on the device, its elements compared bit for bit (NaN: any NaN)
  // with `expected`.
  template <class T>
  void expect_exactly(Op op, Kind kind, const std::vector<T>& input, std::optional<T> init,
                      const std::vector<T>& expected) {
    SCOPED_TRACE(std::string(to_string(op)) + " " + std::string(to_string(kind)) +
                 " n=" + std::to_string(input.size()) + (init ? " with init" : ""));
    const Case c{{dtype(), op, kind, algorithm()}, {}};
    const auto output = run_scan(device(), c, std::as_bytes(std::span(input)), input.size(),
                                 init ? std::optional<Value>(Value::of(*init)) : std::nullopt);
    if (!output) return;  // csdl gave up (test_support.hpp)
    ASSERT_EQ(output->bytes.size(), expected.size() * sizeof(T));
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      T got;
      std::memcpy(&got, output->bytes.data() + i * sizeof(T), sizeof(T));
      const bool same = std::isnan(expected[i])
                            ? std::isnan(got)
                            : got == expected[i] && std::signbit(got) == std::signbit(expected[i]);
      if (!same && wrong++ < 5)
        ADD_FAILURE() << "element " << i << ": got " << got << ", expected " << expected[i];
    }
    EXPECT_EQ(wrong, 0u);
  }

  template <class T>
  void check_edges() {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    const T negative_zero = -T(0);
    for (std::size_t n : {std::size_t{1}, std::size_t{3 * 4096 + 5}}) {
      // Sums of -0.0 are -0.0, and so is an exclusive scan's first element with init -0.0.
      const std::vector<T> zeros(n, negative_zero);
      expect_exactly<T>(Op::add, Kind::inclusive, zeros, std::nullopt, zeros);
      expect_exactly<T>(Op::add, Kind::exclusive, zeros, negative_zero, zeros);
      expect_exactly<T>(Op::add, Kind::reduce, zeros, std::nullopt, {negative_zero});
      // Min and max of NaNs only are NaN; after the first number, that number.
      for (Op op : {Op::min, Op::max}) {
        const std::vector<T> nans(n, nan);
        expect_exactly<T>(op, Kind::reduce, nans, std::nullopt, {nan});
        expect_exactly<T>(op, Kind::inclusive, nans, std::nullopt, nans);
        std::vector<T> late = nans, expected = nans;
        late[n / 2] = T(1.5);
        std::fill(expected.begin() + static_cast<std::ptrdiff_t>(n / 2), expected.end(), T(1.5));
        expect_exactly<T>(op, Kind::inclusive, late, std::nullopt, expected);
        expect_exactly<T>(op, Kind::reduce, late, std::nullopt, {T(1.5)});
      }
    }
  }
};

TEST_P(ScanFloatEdges, SignedZerosAndNaNsFollowIeee) {
  if (dtype() == DType::f32) {
    check_edges<float>();
  } else {
    check_edges<double>();
  }
}

GPUSCAN_INSTANTIATE_FOR_BACKENDS(ScanFloatEdges, ::testing::Values(DType::f32, DType::f64),
                                 ::testing::ValuesIn(all_algorithms));

// ---------------------------------------------------------------------------------------
// DESIGN's sizes, and runs of one Scanner on the same buffers.

class ScanSizes : public BackendTest<Algorithm> {
 protected:
  Algorithm algorithm() const { return std::get<1>(GetParam()); }
};

// 0..5, around one and two tiles of every default shape (2048, 3072, 4096 and 6144
// elements: 32- and 64-bit types, small and large shapes, CPU drivers and GPUs), primes,
// and 2^k - 1, 2^k, 2^k + 1 up to `largest`; on GPUs also around 2^20 and 2^21, where the
// policies switch from the small shape to the large one (4 MiB on Vulkan, 8 MiB on CUDA).
std::vector<std::size_t> design_sizes(std::size_t largest, bool gpu) {
  std::vector<std::size_t> sizes{0, 1, 2, 3, 4, 5, 7919, 104729, 1000003};
  for (std::size_t tile : {2048, 3072, 4096, 6144}) {
    for (std::size_t n = tile - 1; n <= tile + 1; ++n) sizes.push_back(n);
    for (std::size_t n = 2 * tile - 1; n <= 2 * tile + 1; ++n) sizes.push_back(n);
  }
  std::vector<std::size_t> powers{4, 7, 10, 13, 16, 19, 22, 24};
  if (gpu) powers.insert(powers.end(), {20, 21});
  for (std::size_t k : powers) {
    if ((std::size_t{1} << k) > largest) continue;
    for (std::size_t n :
         {(std::size_t{1} << k) - 1, std::size_t{1} << k, (std::size_t{1} << k) + 1})
      sizes.push_back(n);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

TEST_P(ScanSizes, SumsAtEveryDesignSize) {
  for (std::size_t n : design_sizes(largest_size(device()), !is_cpu())) {
    expect_scan_matches(device(), {{DType::u32, Op::add, Kind::inclusive, algorithm()}, {}}, n);
  }
  // 64-bit elements: half the elements a tile, two words a tile state.
  for (std::size_t n :
       design_sizes(is_cpu() ? std::size_t{1} << 20 : largest_size(device()), !is_cpu())) {
    expect_scan_matches(device(), {{DType::u64, Op::add, Kind::exclusive, algorithm()}, {}}, n);
  }
}

TEST_P(ScanSizes, SumsAtOddSizesOfEveryType) {
  for (DType dtype : all_dtypes) {
    for (std::size_t n :
         {std::size_t{0}, std::size_t{5}, std::size_t{8191}, std::size_t{1000003}}) {
      expect_scan_matches(device(), {{dtype, Op::add, Kind::inclusive, algorithm()}, {}}, n);
      expect_scan_matches(device(), {{dtype, Op::add, Kind::exclusive, algorithm()}, {}}, n,
                          some_init(dtype));
    }
    // A reduction of nothing is its init value.
    expect_scan_matches(device(), {{dtype, Op::max, Kind::reduce, algorithm()}, {}}, 0,
                        some_init(dtype));
  }
}

// A run works in one half of the spine and clears what the run before it left in the other
// (docs/protocol.md): runs of the same size, then of growing and shrinking sizes, on one
// Scanner and the same buffers must each find their half all NOT_READY.
TEST_P(ScanSizes, RepeatedRunsOnOneScannerStayCorrect) {
  Scanner scanner = make_scanner(device(), {DType::u32, Op::add, Kind::inclusive, algorithm()},
                                 effective_options(device(), {}));
  constexpr std::size_t tile = 4096;
  const std::size_t largest = std::size_t{1} << 20;
  Buffer in = device().allocate(largest * 4), out = device().allocate(largest * 4);
  for (int run = 0; run < 4; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    expect_run_matches(device(), scanner, in, out, 3 * tile + 17);
  }
  for (std::size_t n :
       {20 * tile + 3, tile, 3 * tile - 1, largest, 20 * tile, 7 * tile + 5, std::size_t{2},
        std::size_t{300000}, 12 * tile, largest - 3, std::size_t{1}}) {
    expect_run_matches(device(), scanner, in, out, n);
  }
  // Another spec on the same buffers, with an init value each time.
  Scanner other = make_scanner(device(), {DType::u32, Op::bit_xor, Kind::exclusive, algorithm()},
                               effective_options(device(), {}));
  for (std::size_t n : {std::size_t{70001}, 5 * tile, std::size_t{70001}})
    expect_run_matches(device(), other, in, out, n, Value::of(std::uint32_t{0xC0FFEE}));
}

GPUSCAN_INSTANTIATE_FOR_BACKENDS(ScanSizes, ::testing::ValuesIn(all_algorithms));

// ---------------------------------------------------------------------------------------
// Simulated blocking: tiles that never post their aggregate force successors into the
// fallback; results stay exact (integers) or within tolerance (floats) at every rate, in
// both tile states. With every tile blocked, each tile's value comes from its owner and from
// fallbacks alike: they must post the same bits, or the split words mix two values.

class ScanBlocking : public BackendTest<DType> {
 protected:
  DType dtype() const { return std::get<1>(GetParam()); }
  // The tile states this device has: split everywhere, packed where it has 64-bit atomics.
  std::vector<TileState> tile_states() {
    std::vector<TileState> states{TileState::split};
    Options packed;
    packed.tile_state = TileState::packed;
    try {
      make_scanner(device(), {dtype(), Op::add, Kind::inclusive, Algorithm::csdldf}, packed);
      states.push_back(TileState::packed);
    } catch (const UsageError& e) {
      std::printf("note: packed tile state not compared: %s\n", e.what());
    }
    return states;
  }
};

TEST_P(ScanBlocking, ExactAtEveryRateInBothTileStates) {
  // 40 tiles of the CPU drivers' 4096 (2048) elements; on GPUs enough to block at 1 in 512
  // with whatever tile the policy picks.
  const std::size_t n =
      (is_cpu() ? 40 * 4096 + 3 : (std::size_t{1} << 22) + 3) / (size_of(dtype()) / 4);
  const std::vector<TileState> states = tile_states();
  for_each_blocking_rate([&](Options options) {
    for (TileState state : states) {
      options.tile_state = state;
      SCOPED_TRACE(state == TileState::split ? "split" : "packed");
      expect_scan_matches(device(),
                          {{dtype(), Op::add, Kind::inclusive, Algorithm::csdldf}, options}, n);
    }
  });
}

// The fallback reduces tiles with the operator, and tile 0's with the init value. With the
// library's wait these runs reuse the unblocked scans' kernels (the mask is a run argument,
// the wait a kernel constant); the rates above wait one step as well.
TEST_P(ScanBlocking, EveryKindAndOperatorUnderBlocking) {
  const std::size_t n = 9 * 4096 + 1;
  for (std::uint32_t mask : {0u, 1u}) {  // every tile, every other tile
    Options options;
    options.blocking_mask = mask;
    SCOPED_TRACE("blocking mask " + std::to_string(mask));
    for (Op op : ops_of(dtype())) {
      for (Kind kind : all_kinds) {
        expect_scan_matches(device(), {{dtype(), op, kind, Algorithm::csdldf}, options}, n,
                            some_init(dtype()));
      }
    }
  }
  // Every tile blocked, larger inputs, both tile states.
  Options all;
  all.blocking_mask = 0;
  all.tuning.max_spins = 1;
  for (TileState state : tile_states()) {
    all.tile_state = state;
    SCOPED_TRACE(state == TileState::split ? "split" : "packed");
    expect_scan_matches(device(), {{dtype(), Op::add, Kind::exclusive, Algorithm::csdldf}, all},
                        std::size_t{1} << 20);
    // And csdl, unblocked.
    Options plain;
    plain.tile_state = state;
    expect_scan_matches(device(), {{dtype(), Op::max, Kind::exclusive, Algorithm::csdl}, plain},
                        9 * 4096 + 1);
    expect_scan_matches(device(), {{dtype(), Op::add, Kind::inclusive, Algorithm::csdl}, plain},
                        (std::size_t{1} << 18) + 3);
  }
}

GPUSCAN_INSTANTIATE_FOR_BACKENDS(ScanBlocking, ::testing::ValuesIn(all_dtypes));

// ---------------------------------------------------------------------------------------
// Chunks: scans larger than one run go in chunks, each starting from the previous chunk's
// carry. A small chunk limit forces many (5000 rounds down to the backend's offset granule:
// on Vulkan whole tiles, here of 256 threads x 4 vectors, 4096 elements of 32-bit types and
// 2048 of 64-bit ones; on CUDA 16 bytes).

class ScanChunks : public BackendTest<DType> {
 protected:
  DType dtype() const { return std::get<1>(GetParam()); }
};

TEST_P(ScanChunks, LargeScansGoInChunks) {
  for (std::size_t chunk : {std::size_t{5000}, std::size_t{3 * 4096}}) {
    Options options;
    options.workgroup_size = 256;
    options.vectors_per_thread = 4;
    options.chunk_elements = chunk;
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    for (Kind kind : all_kinds) {
      for (Algorithm algorithm : all_algorithms) {
        const Case c{{dtype(), Op::add, kind, algorithm}, options};
        expect_scan_matches(device(), c, 10 * chunk + 123);
        expect_scan_matches(device(), c, 2 * chunk, some_init(dtype()));
      }
    }
    expect_scan_matches(device(), {{dtype(), Op::max, Kind::exclusive, Algorithm::csdldf}, options},
                        7 * chunk + 1);
    options.blocking_mask = 1;
    expect_scan_matches(device(), {{dtype(), Op::mul, Kind::inclusive, Algorithm::csdldf}, options},
                        5 * chunk + 3, some_init(dtype()));
  }
  // A chunk must hold the backend's offset granule (Vulkan: a tile; CUDA: 16 bytes).
  Options tiny;
  tiny.chunk_elements = 1;
  EXPECT_THROW(make_scanner(device(), {dtype(), Op::add, Kind::inclusive, Algorithm::csdldf}, tiny),
               UsageError);
}

GPUSCAN_INSTANTIATE_FOR_BACKENDS(ScanChunks, ::testing::ValuesIn(all_dtypes));

// ---------------------------------------------------------------------------------------
// Look-back statistics, tile orders, refusals, and the benchmark: once per backend.

class ScanBackend : public BackendTest<> {};

// The statistics variant counts what the look-backs did, with tiles of 256 threads x 4
// vectors (4096 elements of u32 on every backend). What must hold whatever the scheduling is
// checked on every run (scan_check.hpp). How many tiles fall back is the device's scheduling:
// even with every tile blocked, a tile whose predecessor has finished (a blocked tile still
// posts its inclusive prefix) reads it and needs no fallback, so lavapipe counted 8 to 106
// fallbacks for 256 blocked tiles, and none at all on one worker thread (LP_NUM_THREADS=1),
// which runs the tiles one after the other. A device that runs tiles at the same time must
// sooner or later see a successor look back before its predecessor finished: some run of up
// to 20 must count fallbacks.
TEST_P(ScanBackend, StatisticsKeepTheirInvariants) {
  Options options;
  options.statistics = true;
  options.workgroup_size = 256;
  options.vectors_per_thread = 4;
  const auto run = [&](Algorithm algorithm, std::size_t tiles, const Options& o) {
    const Case c{{DType::u32, Op::add, Kind::inclusive, algorithm}, o};
    const std::size_t n = tiles * 4096;
    const std::uint64_t seed = next_seed();
    SCOPED_TRACE(std::to_string(tiles) + " tiles " + describe(c.spec) +
                 " seed=" + std::to_string(seed));
    const auto input = reference::random_input(DType::u32, Op::add, n, seed);
    const auto output = run_scan(device(), c, input, n);
    if (!output) return std::optional<Statistics>();
    check_output(c.spec, input, n, {}, output->bytes);
    EXPECT_TRUE(output->statistics.has_value());
    const Statistics s = output->statistics.value_or(Statistics{});
    expect_statistics_invariants(s, algorithm, tiles);
    return std::optional<Statistics>(s);
  };
  const std::size_t tiles = is_cpu() ? 256 : 4096;
  for (Algorithm algorithm : {Algorithm::csdldf, Algorithm::csdl}) {
    run(algorithm, 1, options);
    run(algorithm, tiles, options);
  }
  Options blocked = options;
  blocked.blocking_mask = 0;
  blocked.tuning.max_spins = 1;
  run(Algorithm::csdldf, 1, blocked);
  std::uint64_t fallbacks = 0;
  int runs = 0;
  for (; runs < 20 && fallbacks == 0; ++runs) {
    fallbacks += run(Algorithm::csdldf, tiles, blocked).value_or(Statistics{}).fallbacks;
  }
  const char* threads = std::getenv("LP_NUM_THREADS");
  if (is_cpu() && threads && *threads && std::atoi(threads) <= 1) {
    std::printf("note: LP_NUM_THREADS=%s runs tiles one at a time: no fallback is required\n",
                threads);
    return;
  }
  EXPECT_GT(fallbacks, 0u) << "every tile blocked, yet no look-back fell back in " << runs
                           << " runs of " << tiles << " tiles";
}

// Tiles in dispatch order, without the tile counter: correct whatever order the device
// starts workgroups in, because a look-back falls back on a tile nobody has started.
TEST_P(ScanBackend, DispatchOrderTilesStayExact) {
  Options options;
  options.dispatch_order = true;
  const ScanSpec spec{DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf};
  if (is_cpu()) {
    // Refused there: a CPU driver may run the grid's halves on two threads from both ends,
    // and llvmpipe silently cuts the long fallback chains that follow.
    EXPECT_THROW(make_scanner(device(), spec, options), UsageError);
    GTEST_SKIP() << "dispatch-order tiles are for GPUs (the CPU driver's refusal was checked)";
  }
  for (std::size_t n :
       {std::size_t{1}, std::size_t{4097}, std::size_t{1} << 20, (std::size_t{1} << 22) + 3})
    expect_scan_matches(device(), {spec, options}, n);
  options.blocking_mask = 1;
  expect_scan_matches(device(), {spec, options}, 100003);
  expect_scan_matches(device(),
                      {{DType::f64, Op::add, Kind::exclusive, Algorithm::csdldf}, options}, 100003);
}

// A Device is usable from many threads (DESIGN 3a): 4 threads x 200 scans, each thread
// with a Scanner of its own and, every other scan, one Scanner all four share (whose runs
// take turns). Every output is checked; the fixture fails on any validation message
// (threading errors included).
TEST_P(ScanBackend, FourThreadsShareOneDevice) {
  const ScanSpec spec{DType::u32, Op::add, Kind::inclusive};
  Scanner shared = make_scanner(device(), spec, effective_options(device(), {}));
  const std::uint64_t base_seed = next_seed();
  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      try {
        Scanner own = make_scanner(device(), spec, effective_options(device(), {}));
        for (int s = 0; s < 200; ++s) {
          const std::size_t n = 1000 + static_cast<std::size_t>((t * 200 + s) * 37 % 20000);
          const auto input = reference::random_input(
              spec.dtype, spec.op, n, base_seed + static_cast<unsigned>(t * 1000 + s));
          Buffer in = device().allocate(n * 4), out = device().allocate(n * 4);
          device().upload(in, input);
          (s % 2 ? shared : own).run(in, out, n);
          std::vector<std::uint32_t> got(n), x(n);
          device().download(out, std::as_writable_bytes(std::span(got)));
          std::memcpy(x.data(), input.data(), n * 4);
          if (got != reference::scan<std::uint32_t>(spec.kind, spec.op, x)) ++wrong;
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "thread %d: %s\n", t, e.what());
        ++failed;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0) << "scans with a wrong output, of 800 (seeds " << base_seed
                             << " + thread * 1000 + scan)";
}

TEST_P(ScanBackend, RefusesWhatNoBackendCanDo) {
  const auto make = [&](Algorithm algorithm, DType dtype, Op op, const Options& options) {
    make_scanner(device(), {dtype, op, Kind::inclusive, algorithm}, options);
  };
  Options blocking;
  blocking.blocking_mask = 1;  // csdl would wait forever for a blocked tile
  EXPECT_THROW(make(Algorithm::csdl, DType::u32, Op::add, blocking), UsageError);
  Options ordered;
  ordered.dispatch_order = true;
  EXPECT_THROW(make(Algorithm::csdl, DType::u32, Op::add, ordered), UsageError);
  Options no_spins;
  no_spins.tuning.max_spins = 0;
  EXPECT_THROW(make(Algorithm::csdldf, DType::u32, Op::add, no_spins), UsageError);
  EXPECT_THROW(make(Algorithm::csdldf, DType::f32, Op::bit_xor, {}), UsageError);
  // A wrong init type, and buffers too small.
  Scanner scanner(device(), {DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf});
  Buffer in = device().allocate(400), out = device().allocate(400);
  EXPECT_THROW(scanner.run(in, out, 10, Value::of(1.0)), UsageError);
  EXPECT_THROW(scanner.run(in, out, 101), UsageError);
  // In place: a fallback would re-read input its owner may have overwritten.
  EXPECT_THROW(scanner.run(in, in, 10), UsageError);
  // n = 2^62 elements: the size check must not wrap.
  EXPECT_THROW(scanner.run(in, out, std::size_t{1} << 62), UsageError);
}

// Every benchmark run is checked on the device; every run of every implementation must pass
// (csdl's may instead give up, its documented outcome without forward progress).
TEST_P(ScanBackend, BenchmarkValidatesEveryRun) {
  BenchCase c;
  c.n = is_cpu() ? 3 * 4096 + 7 : (std::size_t{1} << 20) + 7;
  c.runs = 3;
  c.seed = next_seed();
  c.implementations = {Implementation::csdldf, Implementation::csdl, Implementation::rts,
                       Implementation::memcpy};
  if (backend() == Backend::cuda) c.implementations.push_back(Implementation::cub);
  expect_benchmark_validates(device(), c);
  // Under blocking, every run validates too.
  c.dtype = DType::u32;
  c.kind = Kind::inclusive;
  c.options.blocking_mask = 0;
  c.options.tuning.max_spins = 1;
  c.implementations = {Implementation::csdldf};
  for (const auto& r : benchmark(device(), c)) EXPECT_EQ(r.validated, 3);
}

GPUSCAN_INSTANTIATE_FOR_BACKENDS(ScanBackend);

}  // namespace
}  // namespace gpuscan::testing
