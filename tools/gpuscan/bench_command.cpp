#include "bench_command.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <optional>
#include <span>

#include "option_values.hpp"
#include "output_file.hpp"
#include "report.hpp"

extern const char* const gpuscan_build_commit;

namespace gpuscan::cli {
namespace {

using namespace gpuscan::testing;

bool is_bitwise(Op op) {
  return op == Op::bit_and || op == Op::bit_or || op == Op::bit_xor;
}

// One CSV/table row: `common` (date, commit, device, ...) completed with a result.
BenchRow make_row(const BenchRow& common, const BenchResult& r, std::size_t n, int runs,
                  double memcpy_ms, std::optional<std::uint32_t> mask) {
  BenchRow row = common;
  row.algorithm = std::string(to_string(r.implementation));
  row.n = n;
  row.runs = runs;
  row.median_ms = median(r.ms);
  row.gelems_per_s = static_cast<double>(n) / (row.median_ms * 1e-3) * 1e-9;
  row.vs_memcpy = memcpy_ms > 0 ? memcpy_ms / row.median_ms : 0;
  row.validated = r.validated;
  row.blocking_mask = mask;
  row.statistics = mean_statistics(r.statistics);
  return row;
}

}  // namespace

int run_bench(const BenchOptions& options) {
  using namespace gpuscan::testing;
  // What the request alone decides is checked before a device is opened, so that a bad
  // request is a usage error (exit 2) whatever devices and drivers the machine has.
  if (is_float(options.dtype) && is_bitwise(options.op)) {
    throw UsageError("--op " + std::string(to_string(options.op)) +
                     " needs an integer --dtype, not " + std::string(to_string(options.dtype)));
  }
  if (options.runs < 0) throw UsageError("--runs must be at least 1");
  std::optional<std::vector<std::size_t>> requested_sizes;
  if (!options.sizes.empty()) requested_sizes = parse_sizes(options.sizes);
  std::vector<Shape> shapes;
  if (!options.shapes.empty()) {
    if (!options.sizes.empty()) throw UsageError("--shape and --sizes exclude each other");
    if (options.kind == Kind::reduce) {
      throw UsageError("--shape benchmarks batched scans (--kind inclusive or exclusive)");
    }
    shapes = parse_shapes(options.shapes);
  }
  // Opened (or its temporary created) now, so that a CSV that cannot be written is refused
  // before the benchmark runs rather than after (output_file.hpp).
  std::optional<OutputFile> csv;
  if (!options.csv.empty()) csv.emplace(options.csv);

  Device device = Device::open(options.backend, options.device);
  const DeviceInfo& info = device.info();
  const bool cpu = info.is_cpu();
  // CPU drivers get a sweep that finishes in a minute or two; GPUs the full one.
  // Each case: n elements, in rows of row_length (0: one scan).
  struct SweepCase {
    std::size_t n = 0, row_length = 0;
    std::string shape;  // "BxN" for a batched case
  };
  std::vector<SweepCase> sweep;
  for (const Shape& shape : shapes) {
    sweep.push_back({shape.rows * shape.row_length, shape.row_length,
                     std::to_string(shape.rows) + "x" + std::to_string(shape.row_length)});
  }
  if (shapes.empty()) {
    for (std::size_t n : requested_sizes ? *requested_sizes : parse_sizes(cpu ? "10:22" : "10:28"))
      sweep.push_back({n, 0, ""});
  }
  const int runs = options.runs > 0 ? options.runs : (cpu ? 5 : 30);
  std::vector<Implementation> implementations = options.implementations;
  if (implementations.empty()) {
    implementations = {Implementation::csdldf, Implementation::csdl, Implementation::memcpy};
    // rts has no batched kernels (the chained scans' row starts live in the tile chain).
    if (shapes.empty()) implementations.insert(implementations.begin() + 2, Implementation::rts);
    // CUB, the scan NVIDIA users compare with, where it applies: CUDA sums.
    if (info.backend == Backend::cuda && options.op == Op::add) {
      implementations.push_back(Implementation::cub);
    }
  }
  // A one-element rehearsal of the whole case: whatever this device or an algorithm cannot
  // take is refused now, in one line, before any progress output.
  {
    BenchCase rehearsal;
    rehearsal.dtype = options.dtype;
    rehearsal.op = options.op;
    rehearsal.kind = options.kind;
    rehearsal.n = 1;
    rehearsal.row_length = shapes.empty() ? 0 : 1;
    rehearsal.runs = 1;
    rehearsal.hot = true;
    rehearsal.warm_code = options.warm_code;
    rehearsal.implementations = implementations;
    rehearsal.options = options.options;
    benchmark(device, rehearsal);
  }
  std::fprintf(stderr, "bench: %s (%s), %s %s %s, %d runs per size%s\n", info.name.c_str(),
               info.type.c_str(), std::string(to_string(options.dtype)).c_str(),
               std::string(to_string(options.op)).c_str(),
               std::string(to_string(options.kind)).c_str(), runs,
               options.hot         ? ", hot cache"
               : options.warm_code ? ", code warmed"
                                   : "");
  if (const auto note = sizes_note(options.sizes))
    std::fprintf(stderr, "bench: note: %s\n", note->c_str());

  const BenchRow common{utc_now(),
                        gpuscan_build_commit,
                        info.name,
                        std::string(to_string(info.backend)),
                        "",
                        std::string(to_string(options.dtype)),
                        std::string(to_string(options.op)),
                        std::string(to_string(options.kind))};
  std::vector<BenchRow> rows;
  int failed_runs = 0;
  detail::CopyRateWatch copy_rates;
  for (const SweepCase& point : sweep) {
    const std::size_t n = point.n;
    if (point.shape.empty()) {
      std::fprintf(stderr, "bench: n = %zu ...\n", n);
    } else {
      std::fprintf(stderr, "bench: %s ...\n", point.shape.c_str());
    }
    BenchCase bench_case;
    bench_case.row_length = point.row_length;
    bench_case.dtype = options.dtype;
    bench_case.op = options.op;
    bench_case.kind = options.kind;
    bench_case.n = n;
    bench_case.runs = runs;
    bench_case.hot = options.hot;
    bench_case.warm_code = options.warm_code;
    bench_case.seed = options.seed + n;
    bench_case.implementations = implementations;
    bench_case.options = options.options;
    const auto results = benchmark(device, bench_case);

    double memcpy_ms = 0;
    for (const auto& r : results) {
      if (r.implementation == Implementation::memcpy) memcpy_ms = median(r.ms);
    }
    if (point.shape.empty()) warn_if_copy_slow(info, copy_rates, n, memcpy_ms);
    const auto add_rows = [&](const std::vector<BenchResult>& measured,
                              std::optional<std::uint32_t> mask) {
      for (const auto& r : measured) {
        rows.push_back(make_row(common, r, n, runs, memcpy_ms, mask));
        rows.back().shape = point.shape;
        failed_runs += runs - r.validated - r.abandoned;
        if (r.abandoned > 0) {
          std::fprintf(stderr,
                       "bench: n = %zu: %d %s runs gave up waiting for a stalled predecessor (this "
                       "device does not guarantee forward progress; csdldf does not need it)\n",
                       n, r.abandoned, std::string(to_string(r.implementation)).c_str());
        }
      }
    };
    add_rows(results, std::nullopt);
    if (options.blocking) {
      // 1 in 2^k tiles never posts its aggregate, k = 0 (every tile) .. 9 (1 in 512).
      bench_case.implementations = {Implementation::csdldf};
      for (std::uint32_t k = 0; k <= 9; ++k) {
        bench_case.options.blocking_mask = (1u << k) - 1;
        add_rows(benchmark(device, bench_case), bench_case.options.blocking_mask);
      }
    }
  }
  std::fputs(format_table(rows).c_str(), stdout);
  if (csv) {
    const std::string text = format_csv(rows);
    csv->write(std::as_bytes(std::span(text)));
    csv->commit();
    std::fprintf(stderr, "bench: wrote %s\n", options.csv.c_str());
  }
  if (failed_runs > 0) {
    std::fprintf(stderr, "gpuscan: error: %d runs produced wrong output\n", failed_runs);
    return 1;
  }
  return 0;
}

}  // namespace gpuscan::cli
