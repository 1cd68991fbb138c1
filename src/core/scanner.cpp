// The public Scanner: argument checks shared by every backend, then the backend's run.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/options.hpp"
#include "core/reference.hpp"
#include "gpuscan/error.hpp"

namespace gpuscan {

Scanner::Scanner(Device& device, ScanSpec spec, Tuning tuning)
    : Scanner(device, spec, testing::Options{.tuning = tuning}) {}

Scanner testing::make_scanner(Device& device, const ScanSpec& spec, const Options& options) {
  return Scanner(device, spec, options);
}

Scanner::Scanner(Device& device, const ScanSpec& spec, const testing::Options& options)
    : spec_(spec), device_(device.impl()) {
  reference::check_op(spec.dtype, spec.op);
  detail::check_options(spec.algorithm, options);
  impl_ = device.impl()->make_scanner(spec, options);
  // Chunks are whole multiples of the backend's offset granule (tiles, aligned offsets).
  const std::size_t granule = impl_->offset_granule();
  const std::size_t limit = options.chunk_elements
                                ? std::min(options.chunk_elements, impl_->max_elements())
                                : impl_->max_elements();
  chunk_ = limit / granule * granule;
  if (chunk_ == 0) {
    throw UsageError("chunk of " + std::to_string(limit) + " elements is smaller than the " +
                     std::to_string(granule) + " one run needs at least");
  }
}

Scanner::~Scanner() = default;
Scanner::Scanner(Scanner&&) noexcept = default;
Scanner& Scanner::operator=(Scanner&&) noexcept = default;

Value Scanner::checked_init(std::optional<Value> init) const {
  const Value start = init.value_or(reference::identity_value(spec_.dtype, spec_.op));
  if (start.dtype != spec_.dtype) {
    throw UsageError("init value is " + std::string(to_string(start.dtype)) + " but the scan is " +
                     std::string(to_string(spec_.dtype)));
  }
  return start;
}

void Scanner::check_buffers(const Buffer& in, const Buffer& out, std::size_t n,
                            std::size_t out_elements) const {
  const std::size_t element = size_of(spec_.dtype);
  // Out of place only: a fallback re-reads a predecessor's input, which that predecessor
  // may already have overwritten (cuda::Plan refuses overlap the same way).
  if (n > 0 && in.impl() == out.impl()) {
    throw UsageError("in and out are the same buffer: in-place scans are not supported");
  }
  // Divided, not multiplied: n * element wraps for n >= 2^61.
  if (in.size() / element < n || out.size() / element < out_elements) {
    throw UsageError("buffers too small for " + std::to_string(n) + " elements of " +
                     std::string(to_string(spec_.dtype)) + " (input " + std::to_string(in.size()) +
                     " bytes, output " + std::to_string(out.size()) + ")");
  }
}

void detail::add_up(RunResult& total, const RunResult& part) {
  total.gpu_ms += part.gpu_ms;
  if (part.statistics) {
    Statistics& sum = total.statistics.emplace(total.statistics.value_or(Statistics{}));
    sum.spins += part.statistics->spins;
    sum.lookback_steps += part.statistics->lookback_steps;
    sum.fallbacks += part.statistics->fallbacks;
    sum.insertions += part.statistics->insertions;
  }
}

RunResult Scanner::run(const Buffer& in, Buffer& out, std::size_t n, std::optional<Value> init) {
  const std::size_t element = size_of(spec_.dtype);
  const Value start = checked_init(init);
  check_buffers(in, out, n, spec_.kind == Kind::reduce ? 1 : n);
  if (n == 0) {
    // Nothing to scan; a reduction of nothing is its init value.
    if (spec_.kind == Kind::reduce) {
      device_->upload(*out.impl(), std::as_bytes(std::span(&start.bits, 1)).first(element));
    }
    return {};
  }
  const std::lock_guard lock(*run_mutex_);
  RunResult total;
  Value carry = start;
  for (std::size_t offset = 0; offset < n; offset += chunk_) {
    const std::size_t count = std::min(chunk_, n - offset);
    const std::size_t out_offset = spec_.kind == Kind::reduce ? 0 : offset;
    detail::add_up(total, impl_->run(*in.impl(), offset, *out.impl(), out_offset, count, carry));
    if (offset + count < n) carry = chunk_carry(in, out, offset, count);
  }
  return total;
}

RunResult Scanner::run_rows(const Buffer& in, Buffer& out, std::size_t rows, std::size_t row_length,
                            std::optional<Value> init) {
  const Value start = checked_init(init);
  if (row_length != 0 && rows > SIZE_MAX / row_length) {
    throw UsageError(std::to_string(rows) + " rows of " + std::to_string(row_length) +
                     " elements are more than memory can hold");
  }
  const std::size_t n = rows * row_length;
  check_buffers(in, out, n, spec_.kind == Kind::reduce ? rows : n);
  if (n == 0) {
    // Rows of nothing: a reduction of each is the init value.
    if (spec_.kind == Kind::reduce) fill_with_init(out, rows, start);
    return {};
  }
  const std::lock_guard lock(*run_mutex_);
  RunResult total;
  Value carry = start;  // what precedes a chunk's element 0 in its row
  for (std::size_t offset = 0; offset < n; offset += chunk_) {
    const std::size_t count = std::min(chunk_, n - offset);
    const std::size_t out_offset = spec_.kind == Kind::reduce ? offset / row_length : offset;
    const detail::ScannerImpl::Rows layout{row_length, offset % row_length, carry};
    detail::add_up(
        total, impl_->run_rows(*in.impl(), offset, *out.impl(), out_offset, count, start, layout));
    if (offset + count < n) {
      carry = chunk_carry(in, out, offset, count, (offset + count - 1) / row_length);
    }
  }
  return total;
}

std::size_t detail::checked_segment_offsets(std::span<const std::int64_t> offsets) {
  if (offsets.empty()) {
    throw UsageError("segment offsets hold at least one value (0, for no segments)");
  }
  if (offsets.front() != 0) {
    throw UsageError("segment offsets start at " + std::to_string(offsets.front()) + ", not 0");
  }
  for (std::size_t s = 1; s < offsets.size(); ++s) {
    if (offsets[s] < offsets[s - 1]) {
      throw UsageError("segment offsets decrease at index " + std::to_string(s) + " (" +
                       std::to_string(offsets[s - 1]) + " then " + std::to_string(offsets[s]) +
                       ")");
    }
  }
  return static_cast<std::size_t>(offsets.back());
}

RunResult Scanner::run_segments(const Buffer& in, Buffer& out,
                                std::span<const std::int64_t> offsets, std::optional<Value> init) {
  const Value start = checked_init(init);
  const std::size_t n = detail::checked_segment_offsets(offsets);
  const std::size_t segments = offsets.size() - 1;
  check_buffers(in, out, n, spec_.kind == Kind::reduce ? segments : n);
  if (spec_.algorithm == Algorithm::rts) {
    throw UsageError("segmented scans take csdldf or csdl, not rts");
  }
  if (n == 0) {
    // Segments of nothing: a reduction of each is the init value.
    if (spec_.kind == Kind::reduce) fill_with_init(out, segments, start);
    return {};
  }
  const std::lock_guard lock(*run_mutex_);
  RunResult total;
  Value carry = start;  // what precedes a chunk's element 0 in its segment
  std::vector<std::uint32_t> starts;
  // Runs of fewer than 2^32 elements: the kernels take the starts as 32-bit run indices.
  const std::size_t chunk = std::min(chunk_, std::size_t{1} << 31);
  for (std::size_t offset = 0; offset < n; offset += chunk) {
    const std::size_t count = std::min(chunk, n - offset);
    // The chunk's segment starts, from its element 0 to just past its end (where the
    // segments that end with the chunk and the empty ones after them are found).
    const auto first =
        std::lower_bound(offsets.begin(), offsets.end(), static_cast<std::int64_t>(offset));
    const auto last =
        std::upper_bound(first, offsets.end(), static_cast<std::int64_t>(offset + count));
    starts.resize(static_cast<std::size_t>(last - first));
    std::transform(first, last, starts.begin(), [offset](std::int64_t o) {
      return static_cast<std::uint32_t>(static_cast<std::size_t>(o) - offset);
    });
    const auto first_segment = static_cast<std::size_t>(first - offsets.begin());
    const std::size_t out_offset = spec_.kind == Kind::reduce ? first_segment : offset;
    const detail::ScannerImpl::Rows layout{0, 0, carry, true, starts};
    detail::add_up(
        total, impl_->run_rows(*in.impl(), offset, *out.impl(), out_offset, count, start, layout));
    if (offset + count < n) {
      // The segment of the chunk's last element: the last offset at or before it.
      const auto open = std::upper_bound(offsets.begin(), offsets.end(),
                                         static_cast<std::int64_t>(offset + count - 1));
      carry =
          chunk_carry(in, out, offset, count, static_cast<std::size_t>(open - offsets.begin()) - 1);
    }
  }
  return total;
}

void Scanner::fill_with_init(Buffer& out, std::size_t count, Value init) {
  if (count == 0) return;
  const std::size_t element = size_of(spec_.dtype);
  std::vector<std::byte> values(count * element);
  for (std::size_t i = 0; i < count; ++i) std::memcpy(&values[i * element], &init.bits, element);
  device_->upload(*out.impl(), values);
}

// What the next chunk starts from: everything up to the end of this one. An inclusive
// scan ends with it; an exclusive one ends one element short; a reduction is it.
// In a batched scan the carry is that of the chunk's last row, and a reduction writes it at
// `reduce_index`; where the next chunk starts a row, the carry goes unused.
Value Scanner::chunk_carry(const Buffer& in, const Buffer& out, std::size_t offset,
                           std::size_t count, std::size_t reduce_index) {
  const std::size_t element = size_of(spec_.dtype);
  const std::size_t last = offset + count - 1;
  const auto read = [&](const Buffer& buffer, std::size_t index) {
    std::uint64_t bits = 0;
    device_->download(*buffer.impl(), std::as_writable_bytes(std::span(&bits, 1)).first(element),
                      index * element);
    return Value{spec_.dtype, bits};
  };
  if (spec_.kind == Kind::reduce) return read(out, reduce_index);
  const Value scanned = read(out, last);
  if (spec_.kind == Kind::inclusive) return scanned;
  const Value x = read(in, last);
  return reference::visit(spec_.dtype, [&](auto tag) {
    using T = decltype(tag);
    return Value::of(reference::combine(spec_.op, scanned.as<T>(), x.as<T>()));
  });
}

}  // namespace gpuscan
