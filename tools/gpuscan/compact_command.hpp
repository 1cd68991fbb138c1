// `gpuscan select|partition|unique IN.npy OUT.npy`, `gpuscan rle IN.npy VALUES.npy
// LENGTHS.npy` (DESIGN section 4) and `gpuscan bench --operation
// select|select-flagged|unique|partition|partition-flagged|rle` (issue 25).
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
  std::string lengths_output;  // rle: the run lengths (u8)
  // select, partition: exactly one of a predicate with its constant (parsed once the input's
  // dtype is known) or a flags file.
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
  // The data (CCCL's benchmark distributions: selected 0, 54 or 100 percent; run lengths
  // uniform in [1, 2^S] for S = 1, 4, 8).
  int selected_percent = 50;  // select, select-flagged, the partitions
  int run_bits = 0;           // unique, rle: 0 for the default lengths, uniform in [1, 15]
  testing::Options options;
  std::string csv;
};

// The data: select keeps x < a threshold that selected_percent of the uniform random
// values lie below, select-flagged and partition-flagged take random u32 flags set with that
// probability, unique
// and rle runs of lengths uniform in [1, 2^run_bits] (by default [1, 15], mean 8). Returns 0
// when every run validated.
int run_compaction_bench(const CompactionBenchOptions& options);

}  // namespace gpuscan::cli
