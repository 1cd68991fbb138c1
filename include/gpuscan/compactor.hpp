// The compaction family (DESIGN 3e): select-if, select-flagged, unique, partition (by a
// predicate or by flags) and run-length encoding, single pass with decoupled fallback, the count
// written on the device. On Vulkan and CUDA devices (issue 25); select and unique also in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscan/device.hpp"
#include "gpuscan/scanner.hpp"
#include "gpuscan/types.hpp"

namespace gpuscan {

enum class Compaction {
  select_if,          // x[i] where x[i] <predicate> constant
  select_flagged,     // x[i] where flags[i] != 0
  unique,             // x[i] where i == 0 or x[i] != x[i-1] (==: +0.0 equals -0.0, NaN nothing)
  partition,          // select_if, and the rejected x[i] in order to a second output
  run_length_encode,  // unique's x[i], and each run's length (uint64) to a second output
  partition_flagged,  // select_flagged, and the unflagged x[i] in order to a second output
};
// Whether an operation reads a flags buffer, and whether it is a partition (two outputs:
// run_partition).
constexpr bool takes_flags(Compaction compaction) {
  return compaction == Compaction::select_flagged || compaction == Compaction::partition_flagged;
}
constexpr bool is_partition(Compaction compaction) {
  return compaction == Compaction::partition || compaction == Compaction::partition_flagged;
}
// Whether an operation writes a second output (a partition's rejected elements, rle's
// lengths), and so whether it may run in place (its output over its input): the operations of
// one output may (DESIGN 3e), wherever the backend compacts in place at all.
constexpr bool writes_second_output(Compaction compaction) {
  return is_partition(compaction) || compaction == Compaction::run_length_encode;
}
constexpr bool runs_in_place(Compaction compaction) {
  return !writes_second_output(compaction);
}
// select-if's built-in predicates: x < c, x <= c, ... (floats: every comparison with NaN is
// false, except ne).
enum class Predicate { lt, le, gt, ge, eq, ne };

std::string_view to_string(Compaction);
std::string_view to_string(Predicate);
std::optional<Compaction> parse_compaction(std::string_view);
std::optional<Predicate> parse_predicate(std::string_view);

struct CompactSpec {
  Compaction compaction = Compaction::select_if;
  DType dtype = DType::u32;
  Predicate predicate = Predicate::lt;      // select_if
  DType flags_dtype = DType::u32;           // select_flagged, partition_flagged: an integer type
  Algorithm algorithm = Algorithm::csdldf;  // csdldf or csdl
};

namespace detail {
class CompactorImpl;
}
class Compactor;
namespace testing {
struct Options;
Compactor make_compactor(Device& device, const CompactSpec& spec, const Options& options);
}  // namespace testing

// Runs of one Compactor take turns, as a Scanner's do.
class Compactor {
 public:
  Compactor(Device& device, CompactSpec spec, Tuning tuning = {});
  ~Compactor();
  Compactor(Compactor&&) noexcept;
  Compactor& operator=(Compactor&&) noexcept;

  // Writes the kept elements of the n elements of `in` to the start of `out` (which holds
  // n elements), in order, and their number as one uint64 to `count` (8 bytes), on the
  // device. `constant` (select_if, the spec's dtype) is what the predicate compares with;
  // `flags` (select_flagged) holds n elements of the spec's flags dtype, in a buffer of its
  // own. `out` may be `in` (in place: the kept elements overwrite the start of the input, the
  // rest of it is left as it was; docs/protocol.md, "In-place compaction"), in one kernel run
  // (max_elements() of a run is the limit). A csdl run in place that gives up
  // (ForwardProgressError) has overwritten part of the input: upload it again to retry.
  RunResult run(const Buffer& in, Buffer& out, Buffer& count, std::size_t n,
                std::optional<Value> constant = {}, const Buffer* flags = nullptr);

  // Partition: the elements that satisfy the predicate go to `selected` as run() writes
  // them, the others to `rejected`, both in order (stable), their number to `count` (the
  // selected ones; n - count were rejected). `selected` and `rejected` hold n elements each.
  // One array of selected then rejected would need the count before the first rejected
  // element is written, which a single pass does not have. No output may be the input (in
  // place is for run()'s select and unique).
  RunResult run_partition(const Buffer& in, Buffer& selected, Buffer& rejected, Buffer& count,
                          std::size_t n, Value constant);
  // Partition by flags (a partition_flagged Compactor): the elements whose flag is nonzero go
  // to `selected`, the others to `rejected`, as above; `flags` as run()'s.
  RunResult run_partition(const Buffer& in, Buffer& selected, Buffer& rejected, Buffer& count,
                          std::size_t n, const Buffer& flags);

  // Run-length encoding: the first element of each run of equal elements (as unique) to
  // `values`, the run's length as a uint64 to `lengths` (n of each fit), the number of runs
  // to `count`. Lengths are 64-bit: a run may be longer than 2^32 elements.
  RunResult run_length_encode(const Buffer& in, Buffer& values, Buffer& lengths, Buffer& count,
                              std::size_t n);

  const CompactSpec& spec() const { return spec_; }
  // The most elements one call takes on this device; larger calls are refused. Inputs longer
  // than one kernel run takes go in chunks, one single-pass run after the other with the
  // running count (and unique's and run-length encoding's last element and last run) carried
  // on the device, no host round trip between them (docs/protocol.md, "Compaction in
  // chunks"). CUDA: no limit but memory. Vulkan: none either where the device has
  // bufferDeviceAddress (chunks whose outputs reach past one storage-buffer binding write them
  // through buffer device addresses); without it the outputs must fit one binding
  // (maxStorageBufferRange: 2^30 - 8 u32 on an H100; half that for run-length encoding's 8-byte
  // lengths), as the scatter then addresses them through one.
  std::size_t max_elements() const;

 private:
  friend Compactor testing::make_compactor(Device&, const CompactSpec&, const testing::Options&);
  Compactor(Device& device, const CompactSpec& spec, const testing::Options& options);
  RunResult checked_run(const Buffer& in, Buffer& out, Buffer& count, std::size_t n,
                        std::optional<Value> constant, const Buffer* flags, const Buffer* second);
  // Throws unless this Compactor can run `name` with its output over its input.
  void check_in_place(const std::string& name, bool two_outputs) const;

  CompactSpec spec_;
  std::size_t chunk_ = 0;  // elements per kernel run
  std::shared_ptr<detail::DeviceImpl> device_;
  std::unique_ptr<detail::CompactorImpl> impl_;
  std::unique_ptr<std::mutex> run_mutex_ = std::make_unique<std::mutex>();
};

namespace detail {
// Compacts host data: upload, run, download; returns the kept elements' bytes (for
// partition, the selected ones' followed by the rejected ones'; for run-length encoding,
// the run values' followed by their lengths as uint64).
std::vector<std::byte> compact_host(Device& device, const CompactSpec& spec,
                                    std::span<const std::byte> input, std::optional<Value> constant,
                                    std::span<const std::byte> flags,
                                    std::uint64_t* kept_count = nullptr);
template <class T>
std::vector<T> kept_as(const std::vector<std::byte>& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}
}  // namespace detail

// One-call compactions of host data.
template <class T>
std::vector<T> select_if(Device& device, std::span<const T> in, Predicate predicate, T constant) {
  const CompactSpec spec{Compaction::select_if, dtype_of<T>(), predicate};
  return detail::kept_as<T>(
      detail::compact_host(device, spec, std::as_bytes(in), Value::of(constant), {}));
}

template <class T, class F>
std::vector<T> select_flagged(Device& device, std::span<const T> in, std::span<const F> flags) {
  const CompactSpec spec{Compaction::select_flagged, dtype_of<T>(), Predicate::lt, dtype_of<F>()};
  return detail::kept_as<T>(
      detail::compact_host(device, spec, std::as_bytes(in), std::nullopt, std::as_bytes(flags)));
}

// The selected elements in order, then the rejected ones in order.
template <class T>
std::vector<T> partition(Device& device, std::span<const T> in, Predicate predicate, T constant) {
  const CompactSpec spec{Compaction::partition, dtype_of<T>(), predicate};
  return detail::kept_as<T>(
      detail::compact_host(device, spec, std::as_bytes(in), Value::of(constant), {}));
}

// The flagged elements in order, then the others in order.
template <class T, class F>
std::vector<T> partition_flagged(Device& device, std::span<const T> in, std::span<const F> flags) {
  const CompactSpec spec{Compaction::partition_flagged, dtype_of<T>(), Predicate::lt,
                         dtype_of<F>()};
  return detail::kept_as<T>(
      detail::compact_host(device, spec, std::as_bytes(in), std::nullopt, std::as_bytes(flags)));
}

template <class T>
std::vector<T> unique(Device& device, std::span<const T> in) {
  const CompactSpec spec{Compaction::unique, dtype_of<T>()};
  return detail::kept_as<T>(
      detail::compact_host(device, spec, std::as_bytes(in), std::nullopt, {}));
}

template <class T>
struct RunLengths {
  std::vector<T> values;               // the first element of each run, in order
  std::vector<std::uint64_t> lengths;  // each run's length
};

template <class T>
RunLengths<T> run_length_encode(Device& device, std::span<const T> in) {
  const CompactSpec spec{Compaction::run_length_encode, dtype_of<T>()};
  std::uint64_t runs = 0;
  const std::vector<std::byte> bytes =
      detail::compact_host(device, spec, std::as_bytes(in), std::nullopt, {}, &runs);
  RunLengths<T> result{std::vector<T>(runs), std::vector<std::uint64_t>(runs)};
  std::memcpy(result.values.data(), bytes.data(), runs * sizeof(T));
  std::memcpy(result.lengths.data(), bytes.data() + runs * sizeof(T), runs * 8);
  return result;
}

}  // namespace gpuscan
