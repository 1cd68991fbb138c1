// Runs one scan on the test device and checks every output element against the CPU
// reference: exactly for integers and for float min/max, within DESIGN's tolerance for
// float sums (|out - ref| <= 1e-5 * sum of |x| so far) and products (relative).
#pragma once

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/reference.hpp"
#include "test_support.hpp"

namespace gpuscan::testing {

struct Case {
  ScanSpec spec;
  Options tuning;
};

inline std::string describe(const Case& c, std::size_t n, std::uint64_t seed) {
  std::string text = "n=" + std::to_string(n) + " seed=" + std::to_string(seed);
  for (std::string_view part : {to_string(c.spec.dtype), to_string(c.spec.op),
                                to_string(c.spec.kind), to_string(c.spec.algorithm)}) {
    text.append(" ").append(part);
  }
  return text;
}

// Scans n random elements (seeded, seed in every failure) on poisoned output.
template <class T>
void expect_scan_matches_typed(Device& device, const Case& c, std::size_t n,
                               std::optional<Value> init) {
  const std::uint64_t seed = next_seed();
  SCOPED_TRACE(describe(c, n, seed) + " logical subgroup " + std::to_string(test_subgroup_size()));
  const auto bytes = reference::random_input(c.spec.dtype, c.spec.op, n, seed);
  std::vector<T> input(n);
  if (n) std::memcpy(input.data(), bytes.data(), bytes.size());
  std::optional<T> init_t;
  if (init) init_t = init->as<T>();

  Options tuning = c.tuning;
  if (tuning.subgroup_size == 0) tuning.subgroup_size = test_subgroup_size();
  if (tuning.tile_state == TileState::automatic) tuning.tile_state = test_tile_state();
  Scanner scanner = make_scanner(device, c.spec, tuning);
  const std::size_t out_n = c.spec.kind == Kind::reduce ? 1 : n;
  Buffer in = device.allocate(n * sizeof(T));
  Buffer out = device.allocate(out_n * sizeof(T));
  device.upload(in, bytes);
  std::vector<T> result(out_n);
  run_with_progress_retries(scanner, [&] {
    std::memset(result.data(), 0xA5, result.size() * sizeof(T));  // poison
    device.upload(out, std::as_bytes(std::span(result)));
    scanner.run(in, out, n, init);
  });
  device.download(out, std::as_writable_bytes(std::span(result)));

  std::size_t wrong = 0;
  const auto report = [&](std::size_t i, const auto& got, const auto& want) {
    if (wrong++ < 5) ADD_FAILURE() << "element " << i << ": got " << got << ", expected " << want;
  };
  if constexpr (std::is_floating_point_v<T>) {
    // Reference in double, and the running sum of |x| the tolerance scales with.
    std::vector<double> wide(input.begin(), input.end());
    std::optional<double> wide_init;
    if (init_t) wide_init = static_cast<double>(*init_t);
    const bool exact_op = c.spec.op == Op::min || c.spec.op == Op::max;
    const auto expected = exact_op
                              ? std::vector<double>()
                              : reference::scan<double>(c.spec.kind, c.spec.op, wide, wide_init);
    const auto exact =
        exact_op ? reference::scan<T>(c.spec.kind, c.spec.op, input, init_t) : std::vector<T>();
    double sum_abs = init_t ? std::fabs(static_cast<double>(*init_t)) : 0.0;
    for (std::size_t i = 0; i < out_n; ++i) {
      const std::size_t last = c.spec.kind == Kind::reduce ? n : i + 1;
      for (std::size_t j = (c.spec.kind == Kind::reduce ? 0 : i); j < last; ++j)
        sum_abs += std::fabs(wide[j]);
      const double want = exact_op ? static_cast<double>(exact[i]) : expected[i];
      const std::size_t position = c.spec.kind == Kind::reduce ? n : i + 1;  // elements combined
      if (!reference::within_tolerance<T>(c.spec.op, result[i], want, sum_abs, position))
        report(i, result[i], want);
    }
  } else {
    const auto expected = reference::scan<T>(c.spec.kind, c.spec.op, input, init_t);
    for (std::size_t i = 0; i < out_n; ++i) {
      if (result[i] != expected[i]) report(i, +result[i], +expected[i]);
    }
  }
  EXPECT_EQ(wrong, 0u) << "wrong elements of " << out_n;
}

inline void expect_scan_matches_on(Device& device, const Case& c, std::size_t n,
                                   std::optional<Value> init = {}) {
  reference::visit(c.spec.dtype,
                   [&](auto tag) { expect_scan_matches_typed<decltype(tag)>(device, c, n, init); });
}

inline void expect_scan_matches(const Case& c, std::size_t n, std::optional<Value> init = {}) {
  expect_scan_matches_on(test_device(), c, n, init);
}

// Convenience for the u32 suites.
inline void expect_scan_matches(const Case& c, std::size_t n, std::uint32_t init) {
  expect_scan_matches(c, n, Value::of(init));
}

// Calls check(tuning) at every simulated blocking rate, 1 in 1 tiles (mask 0) to 1 in 512,
// with one spin before a fallback and with four, each under a trace naming the rate.
template <class Check>
void for_each_blocking_rate(Check check) {
  for (std::uint32_t k = 0; k <= 9; ++k) {
    for (std::uint32_t spins : {1u, 4u}) {
      Options tuning;
      tuning.blocking_mask = (1u << k) - 1;
      tuning.tuning.max_spins = spins;
      SCOPED_TRACE("blocking mask " + std::to_string(*tuning.blocking_mask) + " spins " +
                   std::to_string(spins));
      check(tuning);
    }
  }
}

// The statistics variant counts what the look-back did, with tiles of 256 threads x 4
// vectors (4096 elements on both backends): nothing for a single tile; with every one of `tiles`
// tiles blocked and one spin before a fallback, at least one step for every later tile, fallbacks
// (each after a spin, so no more of them than spins; `runs` runs, at least one fallback in all),
// and never more successful insertions than fallbacks.
inline void expect_statistics_invariants(Device& device, std::size_t tiles, int runs) {
  const auto run = [&](std::size_t n, Options tuning) {
    tuning.statistics = true;
    tuning.workgroup_size = 256;
    tuning.vectors_per_thread = 4;
    Scanner scanner = make_scanner(device, {DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf}, tuning);
    Buffer in = device.allocate(n * 4), out = device.allocate(n * 4);
    device.upload(in, reference::random_input(DType::u32, Op::add, n, next_seed()));
    const RunResult result = scanner.run(in, out, n);
    EXPECT_TRUE(result.statistics.has_value());
    return result.statistics.value_or(Statistics{});
  };
  const Statistics single = run(4096, Options{});
  EXPECT_EQ(single.spins + single.lookback_steps + single.fallbacks + single.insertions, 0u);

  Options blocked;
  blocked.blocking_mask = 0;
  blocked.tuning.max_spins = 1;
  std::uint64_t fallbacks = 0;
  for (int r = 0; r < runs; ++r) {
    const Statistics s = run(tiles * 4096, blocked);
    EXPECT_GE(s.lookback_steps, tiles - 1);
    EXPECT_GE(s.spins, s.fallbacks);  // max_spins = 1: every fallback follows a spin
    EXPECT_LE(s.insertions, s.fallbacks);
    fallbacks += s.fallbacks;
  }
  EXPECT_GT(fallbacks, 0u) << "every tile blocked, yet no look-back ever fell back";
}

}  // namespace gpuscan::testing
