// Benchmark rows and how they are written: the CSV schema of DESIGN.md section 7 and a
// table for people.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/bench_checks.hpp"
#include "gpuscan/device.hpp"
#include "gpuscan/scanner.hpp"

namespace gpuscan::cli {

struct BenchRow {
  std::string date, commit, device, backend, algorithm, dtype, op, kind;
  std::uint64_t n = 0;
  std::string shape;  // a batched case's "BxN" (rows x row length), written in n's place
  int runs = 0;
  double median_ms = 0;
  double gelems_per_s = 0;
  double vs_memcpy = 0;  // 0: no memcpy row at this n
  int validated = 0;
  std::optional<std::uint32_t> blocking_mask;  // simulated blocking, if on
  // Mean per run of spins, look-back steps, fallbacks and insertions (with --stats).
  std::optional<std::array<double, 4>> statistics;
};

// Now, as the CSV's date column (UTC, ISO 8601).
std::string utc_now();
// The mean per run of spins, look-back steps, fallbacks and insertions; nothing without
// statistics.
std::optional<std::array<double, 4>> mean_statistics(const std::vector<Statistics>& runs);

// The rows as CSV, DESIGN section 7's header first.
std::string format_csv(const std::vector<BenchRow>& rows);
std::string format_table(const std::vector<BenchRow>& rows);

// Notes memcpy's median time at n elements in `watch` and, if a GPU ran slow for that size
// (detail::CopyRateWatch), says so on stderr: the size's ratios are suspect. Nothing on CPU
// drivers, whose times move with the host's other work.
void warn_if_copy_slow(const DeviceInfo& info, detail::CopyRateWatch& watch, std::size_t n,
                       double memcpy_ms);

}  // namespace gpuscan::cli
