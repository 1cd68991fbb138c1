// The interface every backend implements behind the public Device, Buffer and Scanner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/bench_target.hpp"
#include "gpuscan/compaction_bench.hpp"
#include "gpuscan/compactor.hpp"
#include "gpuscan/device.hpp"
#include "gpuscan/scanner.hpp"
#include "gpuscan/testing.hpp"

namespace gpuscan::detail {

class BufferImpl {
 public:
  virtual ~BufferImpl() = default;
  virtual std::size_t size() const = 0;
};

class ScannerImpl {
 public:
  virtual ~ScannerImpl() = default;
  // The most elements one run takes, and the granularity of offsets into a buffer.
  virtual std::size_t max_elements() const = 0;
  virtual std::size_t offset_granule() const = 0;
  // Scans n >= 1 elements from element `in_offset` of `in` into `out` from `out_offset`
  // (multiples of offset_granule); the buffers are large enough (checked by Scanner).
  virtual RunResult run(const BufferImpl& in, std::size_t in_offset, BufferImpl& out,
                        std::size_t out_offset, std::size_t n, Value init) = 0;
  // The same for a batched scan: rows of `rows.length` elements, the run's element 0 at
  // `rows.phase` in its row (after `rows.lead`, what precedes it there); `init` applies at
  // each row start. Kind::reduce writes one element per row the run touches.
  // A segmented run (CSR offsets) gives its segment starts instead of a length and phase:
  // ascending run-local element indices, one per segment that starts in [0, n] (an empty
  // segment's start repeats), and a reduction writes the segment of start j at element
  // out_offset + j (out_offset - 1: the segment open at the run's element 0).
  struct Rows {
    std::size_t length = 0;
    std::size_t phase = 0;
    Value lead;
    bool segments = false;
    std::span<const std::uint32_t> segment_starts{};
  };
  virtual RunResult run_rows(const BufferImpl& in, std::size_t in_offset, BufferImpl& out,
                             std::size_t out_offset, std::size_t n, Value init,
                             const Rows& rows) = 0;
};

// Adds a chunk's GPU time and statistics to those of the chunks before.
void add_up(RunResult& total, const RunResult& part);

class CompactorImpl {
 public:
  virtual ~CompactorImpl() = default;
  // The most elements one kernel run (chunk) takes, and the multiple of elements every chunk
  // but the last holds (a whole number of tiles, so that chunks start on aligned vectors).
  virtual std::size_t max_elements() const = 0;
  virtual std::size_t chunk_granule() const = 0;
  // The most elements one call takes, in chunks (Vulkan without bufferDeviceAddress: what one
  // binding of the outputs holds).
  virtual std::size_t max_total_elements() const { return SIZE_MAX; }
  // Compacts n >= 1 elements (checked by Compactor) in chunks of `chunk` elements, one run of
  // the single-pass kernel after the other, the running count carried on the device (DESIGN
  // 3e, docs/protocol.md "Compaction in chunks"): the kept ones to `out`, their number to
  // `count` (8 bytes). `flags`: select-flagged's and partition-flagged's flags (read), else
  // null; `second`: partition's rejected output or run-length encoding's lengths (written),
  // else null.
  virtual RunResult run(const BufferImpl& in, BufferImpl& out, BufferImpl& count, std::size_t n,
                        Value constant, const BufferImpl* flags, const BufferImpl* second,
                        std::size_t chunk) = 0;
  // Whether run() takes `out` == `in` for select and unique (docs/protocol.md, "In-place
  // compaction").
  virtual bool compacts_in_place() const { return false; }
};

class DeviceImpl {
 public:
  virtual ~DeviceImpl() = default;
  virtual const DeviceInfo& info() const = 0;
  virtual std::shared_ptr<BufferImpl> allocate(std::size_t bytes) = 0;
  virtual void upload(BufferImpl& destination, std::span<const std::byte> source) = 0;
  virtual void download(const BufferImpl& source, std::span<std::byte> destination,
                        std::size_t source_offset = 0) = 0;
  virtual std::unique_ptr<ScannerImpl> make_scanner(const ScanSpec& spec,
                                                    const testing::Options& options) = 0;
  // The compaction family (DESIGN 3e); a backend without it says so.
  virtual std::unique_ptr<CompactorImpl> make_compactor(const CompactSpec& spec,
                                                        const testing::Options& options);
  // The compaction benchmark (gpuscan/compaction_bench.hpp); a backend without it says so.
  virtual testing::CompactionBenchResult benchmark_compaction(
      const testing::CompactionBenchCase& bench_case, std::span<const std::byte> input,
      std::span<const std::byte> flags, std::uint64_t expected_count,
      std::span<const std::byte> expected_output);
  // The backend's side of a benchmark; `input` holds bench_case.n elements of its dtype.
  virtual std::unique_ptr<BenchTarget> bench_target(const testing::BenchCase& bench_case,
                                                    std::span<const std::byte> input) = 0;
};

}  // namespace gpuscan::detail
