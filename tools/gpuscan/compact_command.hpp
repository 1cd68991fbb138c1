// `gpuscan select|unique IN.npy OUT.npy` (DESIGN section 4) and
// `gpuscan bench --operation select|select-flagged|unique` (issue 25).
#pragma once

#include <optional>
#include <string>

#include "gpuscan/gpuscan.hpp"
#include "gpuscan/testing.hpp"

namespace gpuscan::cli {

struct CompactOptions {
  Compaction compaction = Compaction::select_if;
  std::string input;
  std::string output;
  // select: exactly one of a predicate with its constant (parsed once the input's dtype is
  // known) or a flags file.
  std::optional<Predicate> predicate;
  std::string constant;
  std::string flags;
  Algorithm algorithm = Algorithm::csdldf;
  Backend backend = Backend::any;
  std::string device;
};

// Returns the process exit status (0); bad input is a UsageError found before a device is
// opened, and OUT is only written when everything succeeded (as `scan`).
int run_compact(const CompactOptions& options);

struct CompactionBenchOptions {
  Compaction compaction = Compaction::select_if;
  Backend backend = Backend::any;
  std::string device;
  DType dtype = DType::u32;
  std::string sizes;  // as `bench --sizes`; empty: 10:22 on a CPU driver, 26:30 on a GPU
  int runs = 0;       // 0: 5 on a CPU driver, 10 on a GPU
  bool hot = false;
  // Each size also with 1 in 2 tiles never posting their count (simulated blocking).
  bool blocking = false;
  std::uint64_t seed = 1;
  testing::Options options;
  std::string csv;
};

// The data: select keeps x < the median of uniform random values (50%),
// select-flagged takes 50% random u32 flags, unique runs of lengths uniform in [1, 15]
// (mean 8). Returns 0 when every run validated.
int run_compaction_bench(const CompactionBenchOptions& options);

}  // namespace gpuscan::cli
