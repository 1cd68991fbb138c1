// The compaction family's benchmark (issue 25), beside gpuscan/testing.hpp's scan benchmark:
// timed runs of one compaction and of the copy baseline (Vulkan's memcpy kernel, CUDA's
// cudaMemcpyAsync) on the same input, and on CUDA of CUB's counterpart, taking turns, each
// after a cache flush.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "gpuscan/compactor.hpp"
#include "gpuscan/testing.hpp"

namespace gpuscan::testing {

struct CompactionBenchCase {
  CompactSpec spec;
  std::size_t n = 0;
  int runs = 10;
  bool hot = false;  // skip the cache flush between runs
  Options options;   // for the compaction; memcpy takes none
  Value constant;    // select-if's
};

struct CompactionBenchResult {
  std::vector<double> compaction_ms, memcpy_ms;  // device time of each timed run
  // Runs whose count (read back after each) matched `expected_count`; the output of the
  // last compaction run was compared with `expected_output` in full.
  int counts_validated = 0;
  bool output_validated = false;
  std::vector<Statistics> statistics;  // per run, with Options::statistics
  // CUDA: CUB's counterpart, timed in the same rounds (empty elsewhere); its runs whose count
  // matched, where its last output matched in full too.
  std::vector<double> cub_ms;
  int cub_validated = 0;
};

// The most elements benchmark_compaction takes: one kernel run's (it times single runs, not
// the chunks Compactor cuts longer inputs into).
std::size_t max_compaction_bench_elements(Device& device, const CompactSpec& spec,
                                          const Options& options = {});

// `input` holds n elements of spec.dtype, `flags` n of spec.flags_dtype (select-flagged,
// partition-flagged).
CompactionBenchResult benchmark_compaction(Device& device, const CompactionBenchCase& bench_case,
                                           std::span<const std::byte> input,
                                           std::span<const std::byte> flags,
                                           std::uint64_t expected_count,
                                           std::span<const std::byte> expected_output);

}  // namespace gpuscan::testing
