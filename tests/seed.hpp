// The tests' random seeds: a fresh one per call, reproducible with GPUSCAN_TEST_SEED, printed
// once, so that every failure can be run again. Needs nothing of a backend.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>

namespace gpuscan::testing {

inline std::uint64_t next_seed() {
  static std::mt19937_64 source = [] {
    const char* fixed = std::getenv("GPUSCAN_TEST_SEED");
    const std::uint64_t base = fixed ? std::strtoull(fixed, nullptr, 0) : std::random_device{}();
    std::printf("GPUSCAN_TEST_SEED=%llu\n", static_cast<unsigned long long>(base));
    return std::mt19937_64(base);
  }();
  return source();
}

}  // namespace gpuscan::testing
