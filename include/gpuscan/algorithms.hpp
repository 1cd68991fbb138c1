// One-call scans of host data: upload, scan on the device, download.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "gpuscan/device.hpp"
#include "gpuscan/scanner.hpp"
#include "gpuscan/types.hpp"

namespace gpuscan {

namespace detail {
// Scans `n` elements of `input` (bytes of `spec.dtype`) into `output`, which holds n
// elements (one for Kind::reduce).
void scan_host(Device& device, const ScanSpec& spec, std::span<const std::byte> input,
               std::span<std::byte> output, std::optional<Value> init);

// The same for a batched scan (Scanner::run_rows): `rows` rows of `row_length` elements in
// `input`; `output` holds as many elements (one per row for Kind::reduce).
void scan_rows_host(Device& device, const ScanSpec& spec, std::span<const std::byte> input,
                    std::span<std::byte> output, std::size_t rows, std::size_t row_length,
                    std::optional<Value> init);

// The same for a segmented scan (Scanner::run_segments): `output` holds as many elements as
// `input` (one per segment for Kind::reduce).
void scan_segments_host(Device& device, const ScanSpec& spec, std::span<const std::byte> input,
                        std::span<std::byte> output, std::span<const std::int64_t> offsets,
                        std::optional<Value> init);

template <class T>
std::vector<T> scan(Device& device, Kind kind, std::span<const T> in, Op op,
                    std::optional<T> init) {
  std::vector<T> out(kind == Kind::reduce ? 1 : in.size());
  std::optional<Value> init_value;
  if (init) init_value = Value::of(*init);
  detail::scan_host(device, ScanSpec{dtype_of<T>(), op, kind, Algorithm::csdldf}, std::as_bytes(in),
                    std::as_writable_bytes(std::span<T>(out)), init_value);
  return out;
}
}  // namespace detail

template <class T>
std::vector<T> inclusive_scan(Device& device, std::span<const T> in, Op op = Op::add,
                              std::optional<T> init = {}) {
  return detail::scan(device, Kind::inclusive, in, op, init);
}

template <class T>
std::vector<T> exclusive_scan(Device& device, std::span<const T> in, Op op = Op::add,
                              std::optional<T> init = {}) {
  return detail::scan(device, Kind::exclusive, in, op, init);
}

template <class T>
T reduce(Device& device, std::span<const T> in, Op op = Op::add, std::optional<T> init = {}) {
  return detail::scan(device, Kind::reduce, in, op, init).front();
}

}  // namespace gpuscan
