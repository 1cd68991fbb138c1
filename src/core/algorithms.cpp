// One-call host scans: upload, run, download.
#include "gpuscan/algorithms.hpp"

#include <algorithm>

namespace gpuscan::detail {

void scan_host(Device& device, const ScanSpec& spec, std::span<const std::byte> input,
               std::span<std::byte> output, std::optional<Value> init) {
  const std::size_t n = input.size() / size_of(spec.dtype);
  Scanner scanner(device, spec);
  Buffer in = device.allocate(input.size());
  Buffer out = device.allocate(output.size());
  device.upload(in, input);
  scanner.run(in, out, n, init);
  device.download(out, output);
}

void scan_rows_host(Device& device, const ScanSpec& spec, std::span<const std::byte> input,
                    std::span<std::byte> output, std::size_t rows, std::size_t row_length,
                    std::optional<Value> init) {
  Scanner scanner(device, spec);
  // Buffers of at least one byte: a device may refuse empty allocations.
  Buffer in = device.allocate(std::max<std::size_t>(input.size(), 1));
  Buffer out = device.allocate(std::max<std::size_t>(output.size(), 1));
  if (!input.empty()) device.upload(in, input);
  scanner.run_rows(in, out, rows, row_length, init);
  if (!output.empty()) device.download(out, output);
}

void scan_segments_host(Device& device, const ScanSpec& spec, std::span<const std::byte> input,
                        std::span<std::byte> output, std::span<const std::int64_t> offsets,
                        std::optional<Value> init) {
  Scanner scanner(device, spec);
  Buffer in = device.allocate(std::max<std::size_t>(input.size(), 1));
  Buffer out = device.allocate(std::max<std::size_t>(output.size(), 1));
  if (!input.empty()) device.upload(in, input);
  scanner.run_segments(in, out, offsets, init);
  if (!output.empty()) device.download(out, output);
}

}  // namespace gpuscan::detail
