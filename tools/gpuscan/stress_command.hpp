// `gpuscan stress`: random scans for a while, every output checked against the CPU
// reference: dtype, operator, kind, algorithm, size (0 to several chunks), init value,
// simulated blocking, max_spins, tile state and chunk size all drawn from a seeded
// generator, so that any failure can be run again alone.
#pragma once

#include <cstdint>
#include <string>

#include "gpuscan/gpuscan.hpp"

namespace gpuscan::cli {

struct StressOptions {
  double seconds = 10;
  std::uint64_t seed = 0;  // 0: from the clock (printed)
  Backend backend = Backend::any;
  std::string device;
};

// Returns the process exit status: 0 when every case matched the reference, 1 otherwise
// (each failure printed with what reproduces it).
int run_stress(const StressOptions& options);

}  // namespace gpuscan::cli
