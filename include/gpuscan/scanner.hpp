// A prepared scan: pipelines built once, then run on any buffers of the device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>

#include "gpuscan/device.hpp"
#include "gpuscan/types.hpp"

namespace gpuscan {

struct ScanSpec {
  DType dtype = DType::u32;
  Op op = Op::add;
  Kind kind = Kind::inclusive;
  Algorithm algorithm = Algorithm::csdldf;
};

// What a user may tune; everything else is the library's choice per device (its policy
// tables). Knobs for tests and experiments (simulated blocking, statistics, tile shapes,
// chunk sizes) are in gpuscan/testing.hpp.
struct Tuning {
  // Look-back reads of a not-ready tile before csdldf falls back on it, for the nearest
  // successor; one further back waits up to 64 times longer, and once a run has seen a
  // starved tile (a fallback found it unposted), the nearest successor waits one read
  // (docs/protocol.md, "Patience"). At least 1. On a CPU driver (lavapipe) it is capped at
  // 128, keeping the longest wait inside llvmpipe's loop limit (a loop past it is cut short,
  // silently); only the wait before a fallback shortens, results stay exact.
  std::uint32_t max_spins = 4;
};

// What the look-backs of one run did, summed over all workgroups.
struct Statistics {
  std::uint64_t spins = 0;           // reads that found the awaited tile not ready
  std::uint64_t lookback_steps = 0;  // look-back reads (each covers a window of tiles)
  std::uint64_t fallbacks = 0;       // fallbacks initiated
  std::uint64_t insertions = 0;      // fallback insertions into a tile nobody had posted
};

struct RunResult {
  double gpu_ms = 0;                     // device time of the scan, from device timestamps
  std::optional<Statistics> statistics;  // with testing::Options::statistics, csdl and csdldf
};

namespace detail {
class ScannerImpl;
}
class Scanner;
namespace testing {
struct Options;
Scanner make_scanner(Device& device, const ScanSpec& spec, const Options& options);
}  // namespace testing

// Thread safety: a Device may be used from any number of threads, each with its own Scanners
// or sharing them; runs of one Scanner take turns (each holds the Scanner's buffers from
// its start to its end), runs of different Scanners are submitted in turn to the device's
// one queue.
namespace detail {
// The element count of CSR segment offsets (Scanner::run_segments), or a UsageError where
// they are not S + 1 values from 0, not decreasing.
std::size_t checked_segment_offsets(std::span<const std::int64_t> offsets);
}  // namespace detail

class Scanner {
 public:
  Scanner(Device& device, ScanSpec spec, Tuning tuning = {});
  ~Scanner();
  Scanner(Scanner&&) noexcept;
  Scanner& operator=(Scanner&&) noexcept;

  // Scans n elements of `in` into `out` (out-of-place). Kind::reduce writes one element.
  // `init` (default: the operator's identity) must have the spec's dtype. Any n: more than
  // one run takes goes in chunks (gpu_ms and statistics are then sums).
  RunResult run(const Buffer& in, Buffer& out, std::size_t n, std::optional<Value> init = {});

  // A batched scan (DESIGN 3f): `rows` rows of `row_length` elements each, row after row in
  // `in`, every row scanned on its own, all in one pass; `init` applies at each row's start.
  // Kind::reduce writes one element per row. The chained algorithms (csdldf, csdl) on every
  // backend; rts is refused. Any number of rows and any row length (chunks may cut rows).
  RunResult run_rows(const Buffer& in, Buffer& out, std::size_t rows, std::size_t row_length,
                     std::optional<Value> init = {});

  // A segmented scan (DESIGN 3f): CSR-style `offsets`, S + 1 values from 0 to n, not
  // decreasing; segment s is elements [offsets[s], offsets[s + 1]) of `in` (n elements),
  // scanned on its own, `init` at its start; segments may be empty. Kind::reduce writes S
  // elements, one per segment (an empty one's is `init`). Checked offsets or a UsageError;
  // the chained algorithms only, as for run_rows.
  RunResult run_segments(const Buffer& in, Buffer& out, std::span<const std::int64_t> offsets,
                         std::optional<Value> init = {});

  const ScanSpec& spec() const { return spec_; }

 private:
  friend Scanner testing::make_scanner(Device&, const ScanSpec&, const testing::Options&);
  Scanner(Device& device, const ScanSpec& spec, const testing::Options& options);
  Value checked_init(std::optional<Value> init) const;
  void check_buffers(const Buffer& in, const Buffer& out, std::size_t n,
                     std::size_t out_elements) const;
  void fill_with_init(Buffer& out, std::size_t count, Value init);
  Value chunk_carry(const Buffer& in, const Buffer& out, std::size_t offset, std::size_t count,
                    std::size_t reduce_index = 0);

  ScanSpec spec_;
  std::size_t chunk_ = 0;  // elements per run
  std::shared_ptr<detail::DeviceImpl> device_;
  std::unique_ptr<detail::ScannerImpl> impl_;
  std::unique_ptr<std::mutex> run_mutex_ = std::make_unique<std::mutex>();
};

}  // namespace gpuscan
