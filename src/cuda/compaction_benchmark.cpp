// The CUDA side of the compaction benchmark (gpuscan/compaction_bench.hpp): cudaMemcpyAsync,
// CUB's counterpart and the compaction on the same input, taking turns in each round, each
// run bracketed by events after a poison fill of its outputs and an L2 flush. Every run's
// count (and the compaction's counters) is copied out and checked; the last compaction
// output and one more CUB output are compared in full on the host. With
// GPUSCAN_BENCH_IN_PLACE=1, also in place (core/in_place_bench.hpp).
#include <algorithm>
#include <cstring>
#include <string>

#include "core/in_place_bench.hpp"
#include "core/reference.hpp"
#include "cuda/check.hpp"
#include "cuda/compaction_launcher.hpp"
#include "cuda/cuda_device.hpp"
#include "cuda/memory.hpp"
#include "cuda/scan_launcher.hpp"

namespace gpuscan::cuda {
namespace {

constexpr std::uint32_t poison = 0xDEADBEEFu;
// As benchmark.cpp: a write larger than L2 between runs starts each run cold.
constexpr std::size_t flush_bytes = std::size_t{512} << 20;

// What the host reads back after each round.
struct RoundRecord {
  std::uint64_t count;           // the compaction's
  std::uint64_t cub_count;       // CUB's
  ChainState chain;              // the compaction's counters
  std::uint64_t in_place_count;  // GPUSCAN_BENCH_IN_PLACE: the in-place run's
  ChainState in_place_chain;     // and its counters
};

// The runs of a round; kInPlace only with GPUSCAN_BENCH_IN_PLACE.
enum Timed { kMemcpy, kCub, kCompaction, kInPlace, kTimed };

// Whether CUB's output, downloaded as ours is laid out (selected then rejected, or values
// then lengths), is the expected one. CUB's partition writes the rejected reversed after the
// selected in one array.
bool cub_output_matches(const CompactSpec& spec, std::uint64_t kept, std::size_t n,
                        const std::vector<std::byte>& got, std::span<const std::byte> expected) {
  if (!is_partition(spec.compaction)) {
    return std::memcmp(got.data(), expected.data(), expected.size()) == 0;
  }
  const std::size_t element = size_of(spec.dtype);
  if (std::memcmp(got.data(), expected.data(), kept * element) != 0) return false;
  for (std::size_t j = 0; kept + j < n; ++j) {
    const std::size_t at = (n - 1 - j) * element;
    if (std::memcmp(got.data() + at, expected.data() + (kept + j) * element, element) != 0) {
      return false;
    }
  }
  return true;
}

}  // namespace

testing::CompactionBenchResult CudaDevice::benchmark_compaction(
    const testing::CompactionBenchCase& c, std::span<const std::byte> input,
    std::span<const std::byte> flags, std::uint64_t expected_count,
    std::span<const std::byte> expected_output) {
  select();
  const CompactSpec& spec = c.spec;
  const std::size_t element = size_of(spec.dtype);
  const CompactionLauncher launcher(spec, policy(spec.dtype), c.options);
  if (c.n > launcher.max_elements()) {
    throw UsageError(std::to_string(c.n) + " elements are more than one compaction run takes on " +
                     info_.name + " (at most " + std::to_string(launcher.max_elements()) + ")");
  }
  const bool flagged = takes_flags(spec.compaction);
  if (flagged && spec.flags_dtype != DType::u32) {
    throw UsageError("the compaction benchmark's flags are u32");
  }
  const bool partition = is_partition(spec.compaction);
  const bool rle = spec.compaction == Compaction::run_length_encode;
  DeviceMemory in(c.n * element), out(c.n * element), count(8), cub_count(8);
  upload(in, input);
  // The flags (select-flagged, partition-flagged); the second output: the partitions'
  // rejected or run-length encoding's lengths.
  DeviceMemory flags_memory, second;
  if (flagged) {
    flags_memory = DeviceMemory(flags.size());
    upload(flags_memory, flags);
  }
  if (partition || rle) second = DeviceMemory(c.n * (rle ? 8 : element));
  OwnedWorkspace workspace;
  workspace.reserve(launcher.workspace_bytes(c.n), stream_);
  DeviceMemory flush;
  if (!c.hot) flush = DeviceMemory(flush_bytes);
  const bool in_place = detail::bench_times_in_place(spec.compaction);
  const int timed = in_place ? kTimed : kInPlace;
  DeviceMemory work, in_place_count(8);  // in place: the input's copy, run over itself
  if (in_place) work = DeviceMemory(c.n * element);

  CompactArgs args;
  args.in = in.data();
  args.out = out.data();
  args.n = c.n;
  args.constant_bits = c.constant.bits;
  args.count = count.as<std::uint64_t>();
  args.flags = flags_memory.size() ? flags_memory.data() : nullptr;
  args.second = second.size() ? second.data() : nullptr;
  CompactArgs cub_args = args;
  cub_args.compaction = spec.compaction;
  cub_args.count = cub_count.as<std::uint64_t>();
  const auto run_cub = [&](void* temp, std::size_t bytes) {
    return reference::visit(spec.dtype, [&](auto tag) {
      return launch_cub_compaction<decltype(tag)>(cub_args, temp, bytes, stream_);
    });
  };
  DeviceMemory cub_temp(std::max<std::size_t>(run_cub(nullptr, 0), 1));
  const auto launch = [&](int which) {
    switch (which) {
      case kMemcpy:
        check(cudaMemcpyAsync(out.data(), in.data(), c.n * element, cudaMemcpyDeviceToDevice,
                              stream_),
              "copying");
        return;
      case kCub:
        run_cub(cub_temp.data(), cub_temp.size());
        return;
      case kInPlace: {
        CompactArgs over = args;
        over.in = over.out = work.data();
        over.count = in_place_count.as<std::uint64_t>();
        launcher.launch(over, workspace.data(), workspace.size(), stream_);
        return;
      }
      default:
        launcher.launch(args, workspace.data(), workspace.size(), stream_);
    }
  };
  // Before each in-place run, untimed: its input back.
  const auto restore = [&] {
    check(cudaMemcpyAsync(work.data(), in.data(), c.n * element, cudaMemcpyDeviceToDevice, stream_),
          "restoring the in-place input");
  };
  // One untimed run each loads the kernels and wakes the device.
  for (int which = 0; which < timed; ++which) {
    if (which == kInPlace) restore();
    launch(which);
  }

  std::vector<cudaEvent_t> events(2 * kTimed * static_cast<std::size_t>(c.runs));
  for (cudaEvent_t& e : events) check(cudaEventCreate(&e), "creating an event");
  void* host = nullptr;
  check(cudaMallocHost(&host, c.runs * sizeof(RoundRecord)), "allocating pinned memory");
  auto* records = static_cast<RoundRecord*>(host);
  testing::CompactionBenchResult result;
  try {
    for (int r = 0; r < c.runs; ++r) {
      RoundRecord* record = records + r;
      for (int which = 0; which < timed; ++which) {
        const std::size_t slot = static_cast<std::size_t>(kTimed * r + which);
        if (which == kInPlace) {
          restore();  // in place writes neither `out` nor `second`, which keep the last output
        } else {
          launch_fill(out.as<std::uint32_t>(), out.size() / 4, poison, stream_);
          if (second.size())
            launch_fill(second.as<std::uint32_t>(), second.size() / 4, poison, stream_);
        }
        if (flush.size()) {
          check(cudaMemsetAsync(flush.data(), static_cast<int>(slot), flush.size(), stream_),
                "flushing L2");
        }
        check(cudaEventRecord(events[2 * slot], stream_), "recording an event");
        launch(which);
        check(cudaEventRecord(events[2 * slot + 1], stream_), "recording an event");
        // A run's counters, before the next run's (in place) replace them.
        if (which == kCompaction || which == kInPlace) {
          check(cudaMemcpyAsync(which == kInPlace ? &record->in_place_chain : &record->chain,
                                workspace.state(), sizeof(ChainState), cudaMemcpyDeviceToHost,
                                stream_),
                "reading the counters");
        }
      }
      check(cudaMemcpyAsync(&record->count, count.data(), 8, cudaMemcpyDeviceToHost, stream_),
            "reading the count");
      check(
          cudaMemcpyAsync(&record->cub_count, cub_count.data(), 8, cudaMemcpyDeviceToHost, stream_),
          "reading CUB's count");
      if (in_place) {
        check(cudaMemcpyAsync(&record->in_place_count, in_place_count.data(), 8,
                              cudaMemcpyDeviceToHost, stream_),
              "reading the in-place count");
      }
    }
    check(cudaStreamSynchronize(stream_), "running the benchmark");
    int cub_counts = 0;
    for (int r = 0; r < c.runs; ++r) {
      float ms[kTimed] = {};
      for (int which = 0; which < timed; ++which) {
        const std::size_t slot = static_cast<std::size_t>(kTimed * r + which);
        check(cudaEventElapsedTime(&ms[which], events[2 * slot], events[2 * slot + 1]),
              "timing a run");
      }
      result.memcpy_ms.push_back(ms[kMemcpy]);
      result.cub_ms.push_back(ms[kCub]);
      result.compaction_ms.push_back(ms[kCompaction]);
      const RoundRecord& record = records[r];
      const RunControl& counts = record.chain.last_counts();
      if (record.count == expected_count && counts.abandoned == 0) ++result.counts_validated;
      if (record.cub_count == expected_count) ++cub_counts;
      if (launcher.counts_statistics()) result.statistics.push_back(counts.statistics());
    }
    // The outputs as ours are laid out: the selected elements (or run values) at the start of
    // `out`, partition's rejected (or the run lengths) in `second`; CUB's partition writes one
    // array (`one_array`).
    const auto download_outputs = [&](bool one_array) {
      std::vector<std::byte> got(expected_output.size());
      const std::size_t selected =
          one_array ? got.size() : std::min(got.size(), expected_count * element);
      if (selected > 0) download(out, std::span(got).first(selected), 0);
      if ((partition || rle) && got.size() > selected) {
        download(second, std::span(got).subspan(selected), 0);
      }
      return got;
    };
    // The last compaction's output in full.
    const std::vector<std::byte> got = download_outputs(false);
    result.output_validated =
        std::memcmp(got.data(), expected_output.data(), expected_output.size()) == 0;
    if (in_place) {
      detail::InPlaceRuns runs;
      for (int r = 0; r < c.runs; ++r) {
        float ms = 0;
        const std::size_t slot = static_cast<std::size_t>(kTimed * r + kInPlace);
        check(cudaEventElapsedTime(&ms, events[2 * slot], events[2 * slot + 1]), "timing a run");
        runs.ms.push_back(ms);
        const RunControl& counts = records[r].in_place_chain.last_counts();
        if (records[r].in_place_count == expected_count && counts.abandoned == 0) {
          ++runs.counts_validated;
        }
        runs.spins += counts.spins;
        runs.steps += counts.lookback_steps;
        runs.fallbacks += counts.fallbacks;
        runs.insertions += counts.insertions;
      }
      // The kept elements at the start of the work buffer (select and unique write nothing
      // else).
      std::vector<std::byte> kept(expected_output.size());
      if (!kept.empty()) download(work, kept, 0);
      runs.output_validated =
          std::memcmp(kept.data(), expected_output.data(), expected_output.size()) == 0;
      detail::report_in_place(c, result, runs, launcher.counts_statistics());
    }
    // CUB's, from one more run.
    launch_fill(out.as<std::uint32_t>(), out.size() / 4, poison, stream_);
    launch(kCub);
    const std::vector<std::byte> cub_got = download_outputs(partition);
    if (cub_output_matches(spec, expected_count, c.n, cub_got, expected_output)) {
      result.cub_validated = cub_counts;
    }
  } catch (...) {
    for (cudaEvent_t e : events) cudaEventDestroy(e);
    cudaFreeHost(host);
    throw;
  }
  for (cudaEvent_t e : events) cudaEventDestroy(e);
  cudaFreeHost(host);
  return result;
}

}  // namespace gpuscan::cuda
