// A developer's timing hook beside the compaction benchmark, not part of the API: with
// GPUSCAN_BENCH_IN_PLACE=1, select-if, select-flagged and unique are also timed in place
// (docs/protocol.md, "In-place compaction") in the same rounds, on a work buffer that an
// untimed copy of the input restores before each run; the in-place times go to stderr beside
// the out-of-place ones, each run's count and the last run's output checked as out of place
// (a mismatch is an error). Each backend's benchmark times the runs; this says whether to,
// and reports them.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpuscan/compaction_bench.hpp"
#include "gpuscan/error.hpp"

namespace gpuscan::detail {

inline bool bench_times_in_place(Compaction compaction) {
  const char* value = std::getenv("GPUSCAN_BENCH_IN_PLACE");
  const bool asked = value != nullptr && std::strcmp(value, "0") != 0;
  return asked && runs_in_place(compaction);
}

// The in-place runs of one benchmark case, as a backend measured them.
struct InPlaceRuns {
  std::vector<double> ms;
  int counts_validated = 0;       // runs whose count was right and that did not give up
  bool output_validated = false;  // the last run's kept elements
  double spins = 0, steps = 0, fallbacks = 0, insertions = 0;  // summed over the runs (statistics)
};

inline double median_ms(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Prints the in-place line to stderr; throws where a run was wrong.
inline void report_in_place(const testing::CompactionBenchCase& c,
                            const testing::CompactionBenchResult& result, const InPlaceRuns& runs,
                            bool statistics) {
  const double in_ms = median_ms(runs.ms);
  const double out_ms = median_ms(result.compaction_ms);
  const double copy_ms = median_ms(result.memcpy_ms);
  std::fprintf(stderr,
               "in place: %s n=%zu%s: memcpy %.4f ms, out of place %.4f ms, in place %.4f ms "
               "(medians of %d), in place / out of place %.3f, x memcpy %.3f, validated %d/%d",
               std::string(to_string(c.spec.compaction)).c_str(), c.n,
               c.options.blocking_mask ? " blocked" : "", copy_ms, out_ms, in_ms, c.runs,
               in_ms / out_ms, copy_ms / in_ms, runs.output_validated ? runs.counts_validated : 0,
               c.runs);
  if (statistics) {
    std::fprintf(stderr, "; a run: %.1f spins, %.1f look-back steps, %.1f claims, %.1f won",
                 runs.spins / c.runs, runs.steps / c.runs, runs.fallbacks / c.runs,
                 runs.insertions / c.runs);
  }
  std::fprintf(stderr, "\n");
  if (!runs.output_validated || runs.counts_validated != c.runs) {
    throw Error("in-place benchmark runs gave wrong results (GPUSCAN_BENCH_IN_PLACE)");
  }
}

}  // namespace gpuscan::detail
