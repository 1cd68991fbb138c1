// One-call host scans: upload, run, download.
#include "gpuscan/algorithms.hpp"

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

}  // namespace gpuscan::detail
