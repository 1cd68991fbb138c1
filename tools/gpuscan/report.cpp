#include "report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

namespace gpuscan::cli {
namespace {

const char* const csv_header =
    "date,commit,device,backend,algorithm,dtype,op,kind,n,runs,median_ms,gelems_per_s,vs_memcpy,"
    "validated,"
    "blocking_mask,spins,lookback_steps,fallbacks,insertions";

// Device names may contain commas.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::optional<std::array<double, 4>> mean_statistics(const std::vector<Statistics>& runs) {
  if (runs.empty()) return std::nullopt;
  std::array<double, 4> mean{};
  for (const Statistics& s : runs) {
    mean[0] += static_cast<double>(s.spins);
    mean[1] += static_cast<double>(s.lookback_steps);
    mean[2] += static_cast<double>(s.fallbacks);
    mean[3] += static_cast<double>(s.insertions);
  }
  for (double& m : mean) m /= static_cast<double>(runs.size());
  return mean;
}

std::string format_csv(const std::vector<BenchRow>& rows) {
  std::string csv = std::string(csv_header) + "\n";
  for (const BenchRow& r : rows) {
    const std::string statistics =
        r.statistics ? fmt::format("{:.1f},{:.1f},{:.1f},{:.1f}", (*r.statistics)[0],
                                   (*r.statistics)[1], (*r.statistics)[2], (*r.statistics)[3])
                     : ",,,";
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{:.6f},{:.4f},{},{},{},{}\n", r.date,
                       r.commit, csv_field(r.device), r.backend, r.algorithm, r.dtype, r.op, r.kind,
                       r.shape.empty() ? std::to_string(r.n) : r.shape, r.runs, r.median_ms,
                       r.gelems_per_s, r.vs_memcpy > 0 ? fmt::format("{:.4f}", r.vs_memcpy) : "",
                       r.validated, r.blocking_mask ? std::to_string(*r.blocking_mask) : "",
                       statistics);
  }
  return csv;
}

std::string format_table(const std::vector<BenchRow>& rows) {
  std::string table = fmt::format("{:>12} {:<8} {:>7} {:>11} {:>10} {:>10} {:>10}", "n", "algo",
                                  "blocked", "median ms", "Gelem/s", "vs memcpy", "validated");
  const bool statistics =
      std::any_of(rows.begin(), rows.end(), [](const BenchRow& r) { return r.statistics; });
  if (statistics)
    table +=
        fmt::format(" {:>10} {:>10} {:>10} {:>10}", "spins", "lb steps", "fallbacks", "inserts");
  table += "\n";
  for (const BenchRow& r : rows) {
    // Blocked: the share of tiles that never post their aggregate (1 in mask + 1).
    const std::string blocked = r.blocking_mask ? fmt::format("1/{}", *r.blocking_mask + 1) : "-";
    table += fmt::format("{:>12} {:<8} {:>7} {:>11.4f} {:>10.3f} {:>10} {:>7}/{:<2}",
                         r.shape.empty() ? std::to_string(r.n) : r.shape, r.algorithm, blocked,
                         r.median_ms, r.gelems_per_s,
                         r.vs_memcpy > 0 ? fmt::format("{:.3f}", r.vs_memcpy) : "-", r.validated,
                         r.runs);
    if (r.statistics) {
      table += fmt::format(" {:>10.1f} {:>10.1f} {:>10.1f} {:>10.1f}", (*r.statistics)[0],
                           (*r.statistics)[1], (*r.statistics)[2], (*r.statistics)[3]);
    }
    table += "\n";
  }
  return table;
}

void warn_if_copy_slow(const DeviceInfo& info, detail::CopyRateWatch& watch, std::size_t n,
                       double memcpy_ms) {
  if (info.is_cpu()) return;
  if (const auto slow = watch.note(n, memcpy_ms)) {
    std::fprintf(stderr,
                 "bench: warning: n = %zu: memcpy ran at %.2f of its rate at n = %zu in this run: "
                 "the device was slow for this size (its clock not yet up, or throttling), so its "
                 "ratios are suspect; run it again\n",
                 n, slow->share, slow->faster_n);
  }
}

}  // namespace gpuscan::cli
