// Runs scans on a device under test and checks every output element against the CPU
// reference: exactly for integers and for float min/max, within DESIGN's tolerance for
// float sums (|out - ref| <= 1e-5 * sum of |x| so far) and products (relative). Outputs are
// poisoned before every run; inputs are random and seeded, the seed in every failure.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "core/reference.hpp"
#include "output_check.hpp"
#include "test_support.hpp"

namespace gpuscan::testing {

struct Case {
  ScanSpec spec;
  Options options;
};

// The options a check runs with: the case's, with the environment's logical subgroup size
// and tile state (test_support.hpp) where the case leaves them to the library.
inline Options effective_options(const Device& device, const Options& options) {
  Options effective = options;
  if (effective.subgroup_size == 0)
    effective.subgroup_size = test_subgroup_size(device.info().backend);
  if (effective.tile_state == TileState::automatic) effective.tile_state = test_tile_state();
  return effective;
}

struct ScanOutput {
  std::vector<std::byte> bytes;
  std::optional<Statistics> statistics;
};

// One run of `scanner` over `input` (n elements, uploaded to `in`) into `out`, poisoned
// first; nullopt where csdl gave up (its documented outcome on a device without forward
// progress; noted, see test_support.hpp).
inline std::optional<ScanOutput> run_once(Device& device, Scanner& scanner, Buffer& in, Buffer& out,
                                          std::span<const std::byte> input, std::size_t n,
                                          std::optional<Value> init) {
  const std::size_t element = size_of(scanner.spec().dtype);
  ScanOutput result;
  result.bytes.resize(output_elements(scanner.spec(), n) * element);
  device.upload(in, input);
  const bool completed = run_accepting_csdl_give_up(scanner.spec().algorithm, [&] {
    // Poison (std::fill: memset's pointer must not be null, even for no bytes).
    std::fill(result.bytes.begin(), result.bytes.end(), std::byte{0xA5});
    device.upload(out, result.bytes);
    result.statistics = scanner.run(in, out, n, init).statistics;
  });
  if (!completed) return std::nullopt;
  device.download(out, result.bytes);
  return result;
}

// A batched or segmented scan of `input` with a fresh Scanner and fresh buffers, the output
// (out_n elements) poisoned first: `run(scanner, in, out)` runs it. The output's bytes, or
// nullopt where csdl gave up (noted, see test_support.hpp).
template <class Run>
std::optional<std::vector<std::byte>> run_poisoned(Device& device, const Case& c,
                                                   std::span<const std::byte> input,
                                                   std::size_t out_n, Run run) {
  Scanner scanner = make_scanner(device, c.spec, effective_options(device, c.options));
  Buffer in = device.allocate(std::max<std::size_t>(input.size(), 16));
  Buffer out = device.allocate(std::max<std::size_t>(out_n * size_of(c.spec.dtype), 16));
  std::vector<std::byte> output(out_n * size_of(c.spec.dtype), std::byte{0xA5});
  if (!input.empty()) device.upload(in, input);
  if (out_n > 0) device.upload(out, output);
  if (!run_accepting_csdl_give_up(c.spec.algorithm, [&] { run(scanner, in, out); })) {
    return std::nullopt;
  }
  if (out_n > 0) device.download(out, output);
  return output;
}

// One scan of `input` with a fresh Scanner and fresh buffers.
inline std::optional<ScanOutput> run_scan(Device& device, const Case& c,
                                          std::span<const std::byte> input, std::size_t n,
                                          std::optional<Value> init = {}) {
  Scanner scanner = make_scanner(device, c.spec, effective_options(device, c.options));
  const std::size_t element = size_of(c.spec.dtype);
  Buffer in = device.allocate(n * element);
  Buffer out = device.allocate(output_elements(c.spec, n) * element);
  return run_once(device, scanner, in, out, input, n, init);
}

// Scans n random elements on the device and checks every output element.
inline void expect_scan_matches(Device& device, const Case& c, std::size_t n,
                                std::optional<Value> init = {}) {
  n = test_size(n);
  const std::uint64_t seed = next_seed();
  const Options options = effective_options(device, c.options);
  SCOPED_TRACE(
      "n=" + std::to_string(n) + " seed=" + std::to_string(seed) + " " + describe(c.spec) +
      (options.subgroup_size ? " logical subgroup " + std::to_string(options.subgroup_size) : ""));
  const auto input = reference::random_input(c.spec.dtype, c.spec.op, n, seed);
  if (const auto output = run_scan(device, c, input, n, init))
    check_output(c.spec, input, n, init, output->bytes);
}

// The same on a given Scanner and buffers (repeated runs).
inline void expect_run_matches(Device& device, Scanner& scanner, Buffer& in, Buffer& out,
                               std::size_t n, std::optional<Value> init = {}) {
  n = test_size(n);
  const std::uint64_t seed = next_seed();
  SCOPED_TRACE("n=" + std::to_string(n) + " seed=" + std::to_string(seed) + " " +
               describe(scanner.spec()));
  const auto input = reference::random_input(scanner.spec().dtype, scanner.spec().op, n, seed);
  if (const auto output = run_once(device, scanner, in, out, input, n, init))
    check_output(scanner.spec(), input, n, init, output->bytes);
}

// An init value that is not the identity of any operator.
inline Value some_init(DType dtype) {
  return reference::visit(dtype, [](auto tag) { return Value::of(static_cast<decltype(tag)>(3)); });
}

inline std::vector<Op> ops_of(DType dtype) {
  if (is_float(dtype)) return {Op::add, Op::mul, Op::min, Op::max};
  return {Op::add, Op::mul, Op::min, Op::max, Op::bit_and, Op::bit_or, Op::bit_xor};
}

constexpr DType all_dtypes[] = {DType::u32, DType::i32, DType::f32,
                                DType::u64, DType::i64, DType::f64};
constexpr Algorithm all_algorithms[] = {Algorithm::csdldf, Algorithm::csdl, Algorithm::rts};
constexpr Kind all_kinds[] = {Kind::inclusive, Kind::exclusive, Kind::reduce};

// Elements of a tile of `workgroup` threads x `vectors` 16-byte vectors (both backends).
inline std::size_t tile_elements(DType dtype, std::uint32_t workgroup, std::uint32_t vectors) {
  return std::size_t{workgroup} * vectors * 16 / size_of(dtype);
}

// What a run's statistics must show whatever the scheduling (no assumption on how often the
// device made a tile wait): a single tile looks back at nothing; every later tile reads the
// window before it at least once; every fallback follows at least one read that found its
// tile not ready; a fallback inserts at most once; csdl never falls back.
inline void expect_statistics_invariants(const Statistics& s, Algorithm algorithm,
                                         std::size_t tiles) {
  SCOPED_TRACE("tiles " + std::to_string(tiles) + " spins " + std::to_string(s.spins) + " steps " +
               std::to_string(s.lookback_steps) + " fallbacks " + std::to_string(s.fallbacks) +
               " insertions " + std::to_string(s.insertions));
  if (tiles <= 1) {
    EXPECT_EQ(s.spins + s.lookback_steps + s.fallbacks + s.insertions, 0u) << "a single tile";
    return;
  }
  EXPECT_GE(s.lookback_steps, tiles - 1);
  EXPECT_GE(s.spins, s.fallbacks);
  EXPECT_LE(s.insertions, s.fallbacks);
  if (algorithm == Algorithm::csdl) {
    EXPECT_EQ(s.fallbacks, 0u) << "csdl has no fallback";
  }
}

// Calls check(options) at every simulated blocking rate, 1 in 1 tiles (mask 0) to 1 in 512,
// with one spin before a fallback and with four, each under a trace naming the rate.
template <class Check>
void for_each_blocking_rate(Check check) {
  for (std::uint32_t k = 0; k <= 9; ++k) {
    for (std::uint32_t spins : {1u, 4u}) {
      Options options;
      options.blocking_mask = (1u << k) - 1;
      options.tuning.max_spins = spins;
      SCOPED_TRACE("blocking mask " + std::to_string(*options.blocking_mask) + " spins " +
                   std::to_string(spins));
      check(options);
    }
  }
}

// Benchmarks `c` for u32, f32, u64 and f64 in every kind: every run of every
// implementation validated, except csdl runs that gave up (its documented outcome without
// forward progress, printed as a note), and every run timed.
inline void expect_benchmark_validates(Device& device, BenchCase c) {
  for (DType dtype : {DType::u32, DType::f32, DType::u64, DType::f64}) {
    for (Kind kind : all_kinds) {
      c.dtype = dtype;
      c.kind = kind;
      for (const auto& r : benchmark(device, c)) {
        SCOPED_TRACE(std::string(to_string(r.implementation)) + " " +
                     std::string(to_string(dtype)) + " " + std::string(to_string(kind)) +
                     " seed=" + std::to_string(c.seed));
        EXPECT_EQ(r.validated + r.abandoned, c.runs);
        if (r.implementation != Implementation::csdl) {
          EXPECT_EQ(r.abandoned, 0);
        }
        if (r.abandoned)
          std::printf("note: %d csdl runs gave up (documented outcome without forward progress)\n",
                      r.abandoned);
        EXPECT_EQ(r.ms.size(), static_cast<std::size_t>(c.runs));
        for (double ms : r.ms) EXPECT_GT(ms, 0.0);
      }
    }
  }
}

}  // namespace gpuscan::testing
