#include "compact_command.hpp"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <type_traits>
#include <vector>

#include "bench_command.hpp"
#include "core/reference.hpp"
#include "gpuscan/compaction_bench.hpp"
#include "npy.hpp"
#include "option_values.hpp"
#include "output_file.hpp"
#include "report.hpp"
#include "scan_command.hpp"

extern const char* const gpuscan_build_commit;

namespace gpuscan::cli {
namespace {

bool makes_runs(Compaction compaction) {
  return compaction == Compaction::unique || compaction == Compaction::run_length_encode;
}

// The longest run of the benchmark's unique and rle input: 2^run_bits, or 15 by default.
std::size_t longest_run(int run_bits) {
  return run_bits > 0 ? std::size_t{1} << run_bits : 15;
}

// The benchmark's input: for the selections, values uniform in [0, 1) (floats) or in
// [0, 2^(bits - 2)) (integers, so that a threshold can select all of them); for unique and
// rle, runs of lengths uniform in [1, longest_run], each value differing from the one
// before, uniform over the dtype's bits.
std::vector<std::byte> bench_input(DType dtype, Compaction compaction, std::size_t n, int run_bits,
                                   std::mt19937_64& rng) {
  std::vector<std::byte> data(n * size_of(dtype));
  reference::visit(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* x = reinterpret_cast<T*>(data.data());
    const auto draw = [&] {
      if constexpr (std::is_floating_point_v<T>) {
        return static_cast<T>(std::uniform_real_distribution<double>(0, 1)(rng));
      } else {
        return static_cast<T>(rng());
      }
    };
    if (!makes_runs(compaction)) {
      for (std::size_t i = 0; i < n; ++i) {
        if constexpr (std::is_floating_point_v<T>) {
          x[i] = draw();
        } else {
          x[i] = static_cast<T>(rng() >> (66 - 8 * sizeof(T)));
        }
      }
      return;
    }
    std::uniform_int_distribution<std::size_t> length(1, longest_run(run_bits));
    T value = draw();
    for (std::size_t i = 0; i < n;) {
      for (std::size_t j = length(rng); j > 0 && i < n; --j) x[i++] = value;
      T next = draw();
      while (next == value) next = draw();
      value = next;
    }
  });
  return data;
}

// select's constant: with `lt`, `percent` of bench_input's values are kept.
Value threshold(DType dtype, int percent) {
  return reference::visit(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      return Value::of(static_cast<T>(percent / 100.0));
    } else {
      const auto range = static_cast<std::uint64_t>(1) << (8 * sizeof(T) - 2);
      return Value::of(static_cast<T>(range / 100 * static_cast<std::uint64_t>(percent)));
    }
  });
}

// The kept elements on the CPU, and their number (rle: the run values, then their lengths
// as uint64).
std::vector<std::byte> kept_on_host(const CompactSpec& spec, const std::vector<std::byte>& in,
                                    const std::vector<std::byte>& flags, Value constant,
                                    std::uint64_t* kept_count) {
  std::vector<std::byte> kept;
  kept.reserve(in.size());
  reference::visit(spec.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = reinterpret_cast<const T*>(in.data());
    const std::uint32_t* f = reinterpret_cast<const std::uint32_t*>(flags.data());
    const T c = constant.as<T>();
    const std::size_t n = in.size() / sizeof(T);
    std::vector<T> out, rejected;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      bool keep = false;
      switch (spec.compaction) {
        case Compaction::select_if:
          keep = x[i] < c;
          break;
        case Compaction::select_flagged:
        case Compaction::partition_flagged:
          keep = f[i] != 0;
          break;
        case Compaction::unique:
        case Compaction::run_length_encode:
          keep = i == 0 || !(x[i] == x[i - 1]);
          break;
        case Compaction::partition:
          keep = x[i] < c;
          break;
      }
      if (keep) {
        out.push_back(x[i]);
      } else if (is_partition(spec.compaction)) {
        rejected.push_back(x[i]);
      }
    }
    if (kept_count) *kept_count = out.size();
    out.insert(out.end(), rejected.begin(), rejected.end());
    kept.resize(out.size() * sizeof(T));
    std::memcpy(kept.data(), out.data(), kept.size());
    if (spec.compaction == Compaction::run_length_encode) {
      std::vector<std::uint64_t> lengths;
      lengths.reserve(out.size());
      for (std::size_t i = 0; i < n; ++i) {
        if (i == 0 || !(x[i] == x[i - 1])) {
          lengths.push_back(1);
        } else {
          ++lengths.back();
        }
      }
      const auto* bytes = reinterpret_cast<const std::byte*>(lengths.data());
      kept.insert(kept.end(), bytes, bytes + lengths.size() * 8);
    }
  });
  return kept;
}

}  // namespace

int run_compact(const CompactOptions& options) {
  const NpyArray input = read_npy(options.input);
  const std::string dtype_name(to_string(input.dtype));
  CompactSpec spec{options.compaction, input.dtype};
  spec.algorithm = options.algorithm;
  std::optional<Value> constant;
  std::optional<NpyArray> flags;
  if (!makes_runs(options.compaction)) {
    if (options.predicate.has_value() == !options.flags.empty()) {
      throw UsageError(
          std::string(options.compaction == Compaction::partition ? "partition" : "select") +
          " needs exactly one of --lt, --le, --gt, --ge, --eq, --ne V or --flags F.npy");
    }
    if (options.predicate) {
      spec.predicate = *options.predicate;
      constant = parse_value(input.dtype, options.constant);
      if (!constant) {
        throw UsageError("--" + std::string(to_string(*options.predicate)) + ": '" +
                         options.constant + "' is not a value of the input's dtype, " + dtype_name);
      }
    } else {
      spec.compaction = options.compaction == Compaction::partition ? Compaction::partition_flagged
                                                                    : Compaction::select_flagged;
      flags = read_npy(options.flags);
      if (is_float(flags->dtype)) {
        throw UsageError("--flags: '" + options.flags + "' holds " +
                         std::string(to_string(flags->dtype)) +
                         "; flags must be integers (u4, i4, u8, i8), nonzero = selected");
      }
      if (flags->size() != input.size()) {
        throw UsageError("--flags: '" + options.flags + "' holds " + std::to_string(flags->size()) +
                         " elements, '" + options.input + "' " + std::to_string(input.size()));
      }
      spec.flags_dtype = flags->dtype;
    }
  }
  const bool rle = spec.compaction == Compaction::run_length_encode;
  OutputFile output_file(options.output);
  std::optional<OutputFile> lengths_file;
  if (rle) {
    // The same file by another name too (./v.npy and v.npy): one would silently replace the
    // other at commit.
    std::error_code ignored;
    if (std::filesystem::weakly_canonical(options.lengths_output, ignored) ==
        std::filesystem::weakly_canonical(options.output, ignored)) {
      throw UsageError("rle: VALUES and LENGTHS must be different files");
    }
    lengths_file.emplace(options.lengths_output);
  }
  Device device = Device::open(options.backend, options.device);
  std::uint64_t selected = 0;
  const std::vector<std::byte> kept = detail::compact_host(
      device, spec, input.data, constant,
      flags ? std::span<const std::byte>(flags->data) : std::span<const std::byte>(), &selected);
  if (rle) {
    // The run values, then the lengths: both files are complete before either is put in place.
    const std::size_t value_bytes = selected * size_of(input.dtype);
    write_npy_content(*lengths_file, DType::u64, std::span(kept).subspan(value_bytes));
    write_npy_content(output_file, input.dtype, std::span(kept).first(value_bytes));
    lengths_file->commit();
    output_file.commit();
    return 0;
  }
  write_npy(output_file, input.dtype, kept);
  if (is_partition(spec.compaction)) {
    std::printf("selected: %llu\n", static_cast<unsigned long long>(selected));
  }
  return 0;
}

int run_compaction_bench(const CompactionBenchOptions& options) {
  std::optional<std::vector<std::size_t>> requested_sizes;
  if (!options.sizes.empty()) requested_sizes = parse_sizes(options.sizes);
  std::optional<OutputFile> csv;
  if (!options.csv.empty()) csv.emplace(options.csv);
  Device device = Device::open(options.backend, options.device);
  const DeviceInfo& info = device.info();
  const bool cpu = info.is_cpu();
  const auto sizes = requested_sizes ? *requested_sizes : parse_sizes(cpu ? "10:22" : "26:30");
  const int runs = options.runs > 0 ? options.runs : (cpu ? 5 : 10);
  CompactSpec spec{options.compaction, options.dtype};
  spec.flags_dtype = DType::u32;
  // Every size is checked before anything runs: a size past one run's limit is a usage
  // error up front, not after the sizes before it.
  const std::size_t max_n = testing::max_compaction_bench_elements(device, spec);
  for (std::size_t n : sizes) {
    if (n > max_n) {
      throw UsageError("--sizes: " + std::to_string(n) + " elements are more than one " +
                       std::string(to_string(spec.compaction)) + " run takes on " + info.name +
                       " (at most " + std::to_string(max_n) +
                       "; the benchmark times one run, not chunks)");
    }
  }
  const std::string operation(to_string(spec.compaction));
  // The CSV keeps DESIGN section 7's columns: `kind` names the operation and `op` its data,
  // e.g. lt@54% (x < a threshold 54% of the values lie below), flags@54% (u32 flags, 54%
  // nonzero), runs1-16 (run lengths uniform in [1, 16]). The limit is in the table only.
  const std::string percent = "@" + std::to_string(options.selected_percent) + "%";
  const std::string op_column =
      spec.compaction == Compaction::select_if || spec.compaction == Compaction::partition
          ? "lt" + percent
      : takes_flags(spec.compaction) ? "flags" + percent
                                     : "runs1-" + std::to_string(longest_run(options.run_bits));
  const BenchRow common{utc_now(), gpuscan_build_commit,
                        info.name, std::string(to_string(info.backend)),
                        "",        std::string(to_string(spec.dtype))};
  std::vector<BenchRow> rows;
  std::fprintf(stderr, "%s (%s) on %s, %d runs each, %s\n", operation.c_str(), op_column.c_str(),
               info.name.c_str(), runs, options.hot ? "hot" : "L2 flushed");
  if (const auto note = sizes_note(options.sizes))
    std::fprintf(stderr, "bench: note: %s\n", note->c_str());
  // CUDA also times CUB's counterpart: its time, ours over it, and its validation.
  const bool cub = info.backend == Backend::cuda;
  std::printf("%-21s %12s %10s %10s %10s %10s %9s %9s", "operation", "n", "memcpy ms", "op ms",
              "x memcpy", "limit", "of limit", "valid");
  if (cub) std::printf(" %10s %9s %9s", "cub ms", "x cub", "cub valid");
  std::printf("\n");
  int failures = 0;
  detail::CopyRateWatch copy_rates;
  std::mt19937_64 rng(options.seed);
  for (std::size_t n : sizes) {
    const std::size_t element = size_of(spec.dtype);
    const std::vector<std::byte> input =
        bench_input(spec.dtype, spec.compaction, n, options.run_bits, rng);
    std::vector<std::byte> flags;
    if (takes_flags(spec.compaction)) {
      flags.resize(n * 4);
      auto* f = reinterpret_cast<std::uint32_t*>(flags.data());
      const auto percent_set = static_cast<std::uint64_t>(options.selected_percent);
      for (std::size_t i = 0; i < n; ++i) f[i] = rng() % 100 < percent_set ? 1u : 0u;
    }
    const Value constant =
        spec.compaction == Compaction::select_if || spec.compaction == Compaction::partition
            ? threshold(spec.dtype, options.selected_percent)
            : Value{spec.dtype, 0};
    std::uint64_t kept = 0;
    const std::vector<std::byte> expected = kept_on_host(spec, input, flags, constant, &kept);
    std::vector<std::optional<std::uint32_t>> masks{options.options.blocking_mask};
    if (options.blocking) masks.push_back(1u);
    for (const std::optional<std::uint32_t> blocking_mask : masks) {
      testing::CompactionBenchCase c{spec, n, runs, options.hot, options.options, constant};
      c.options.blocking_mask = blocking_mask;
      const testing::CompactionBenchResult r =
          testing::benchmark_compaction(device, c, input, flags, kept, expected);
      const double memcpy_ms = testing::median(r.memcpy_ms);
      warn_if_copy_slow(info, copy_rates, n, memcpy_ms);
      const double op_ms = testing::median(r.compaction_ms);
      // The memory-bound limit: this run's bytes read and written at memcpy's rate (memcpy
      // moves 2 n elements).
      // (rle also writes a uint64 length per run).
      const std::size_t written = is_partition(spec.compaction) ? n : kept;
      const std::size_t lengths = spec.compaction == Compaction::run_length_encode ? kept * 8 : 0;
      const double bytes =
          static_cast<double>(n * element + written * element + lengths + flags.size());
      const double memcpy_bytes = 2.0 * static_cast<double>(n * element);
      const double limit = memcpy_bytes / bytes;  // the op's best time ratio over memcpy's
      const double vs_memcpy = memcpy_ms / op_ms;
      const double of_limit = vs_memcpy / limit;
      const int validated = r.output_validated ? r.counts_validated : 0;
      failures += runs - validated;
      const std::string label =
          operation + (blocking_mask ? " 1/" + std::to_string(*blocking_mask + 1) : "");
      std::printf("%-21s %12zu %10.4f %10.4f %10.3f %10.3f %9.3f %6d/%d", label.c_str(), n,
                  memcpy_ms, op_ms, vs_memcpy, limit, of_limit, validated, runs);
      const double cub_ms = r.cub_ms.empty() ? 0 : testing::median(r.cub_ms);
      if (!r.cub_ms.empty()) {
        std::printf(" %10.4f %9.3f %6d/%d", cub_ms, cub_ms / op_ms, r.cub_validated, runs);
        failures += runs - r.cub_validated;
      }
      std::printf("\n");
      std::fflush(stdout);
      const auto gelems = [&](double ms) { return static_cast<double>(n) / (ms * 1e-3) * 1e-9; };
      BenchRow copy = common;
      copy.algorithm = "memcpy";
      copy.kind = "copy";
      copy.n = n;
      copy.runs = runs;
      copy.median_ms = memcpy_ms;
      copy.gelems_per_s = gelems(memcpy_ms);
      copy.vs_memcpy = 1;
      copy.validated = runs;
      rows.push_back(copy);
      BenchRow row = copy;
      row.algorithm = to_string(spec.algorithm);
      row.op = op_column;
      row.kind = operation;
      row.median_ms = op_ms;
      row.gelems_per_s = gelems(op_ms);
      row.vs_memcpy = vs_memcpy;
      row.validated = validated;
      row.blocking_mask = blocking_mask;
      row.statistics = mean_statistics(r.statistics);
      rows.push_back(row);
      if (!r.cub_ms.empty() && !blocking_mask) {
        BenchRow baseline = row;
        baseline.algorithm = "cub";
        baseline.median_ms = cub_ms;
        baseline.gelems_per_s = gelems(cub_ms);
        baseline.vs_memcpy = memcpy_ms / cub_ms;
        baseline.validated = r.cub_validated;
        baseline.blocking_mask = std::nullopt;
        baseline.statistics = {};
        rows.push_back(baseline);
      }
    }
  }
  if (csv) {
    const std::string text = format_csv(rows);
    csv->write(std::as_bytes(std::span(text.data(), text.size())));
    csv->commit();
  }
  if (failures > 0) {
    std::fprintf(stderr, "gpuscan: error: %d runs failed validation\n", failures);
    return 1;
  }
  return 0;
}

}  // namespace gpuscan::cli
