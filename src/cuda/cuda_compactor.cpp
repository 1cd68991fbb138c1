#include "cuda/cuda_compactor.hpp"

#include <algorithm>

#include "cuda/check.hpp"
#include "cuda/cuda_scanner.hpp"
#include "cuda/memory.hpp"

namespace gpuscan::cuda {

CudaCompactor::CudaCompactor(const DeviceInfo& device, cudaStream_t stream, const CompactSpec& spec,
                             const detail::ScanPolicy& policy, const testing::Options& options)
    : device_(device),
      stream_(stream),
      launcher_(spec, policy, options),
      carry_(2 * sizeof(ChunkCarry)) {
  check(cudaEventCreate(&start_), "creating an event");
  check(cudaEventCreate(&end_), "creating an event");
}

CudaCompactor::~CudaCompactor() {
  cudaEventDestroy(start_);
  cudaEventDestroy(end_);
}

RunResult CudaCompactor::run(const detail::BufferImpl& in, detail::BufferImpl& out,
                             detail::BufferImpl& count, std::size_t n, Value constant,
                             const detail::BufferImpl* flags_buffer,
                             const detail::BufferImpl* second, std::size_t chunk) {
  const CompactSpec& spec = launcher_.spec();
  const auto* in_bytes =
      static_cast<const std::byte*>(dynamic_cast<const DeviceMemory&>(in).data());
  CompactArgs args;
  args.out = dynamic_cast<DeviceMemory&>(out).data();
  args.count = dynamic_cast<DeviceMemory&>(count).as<std::uint64_t>();
  args.constant_bits = constant.bits;
  // The flags (read); the second output: partition's rejected elements or run-length
  // encoding's lengths (written).
  const std::byte* flags =
      flags_buffer
          ? static_cast<const std::byte*>(dynamic_cast<const DeviceMemory&>(*flags_buffer).data())
          : nullptr;
  if (second) args.second = dynamic_cast<const DeviceMemory&>(*second).data();
  void* workspace = workspace_.reserve(launcher_.workspace_bytes(std::min(n, chunk)), stream_);
  // Chunk after chunk on the stream, the carry handed on in device memory (two slots: a chunk
  // reads one while its last tile writes the other), no host round trip between them
  // (docs/protocol.md, "Compaction in chunks"). Only csdl (whose give-ups must be seen) and
  // the statistics variant read each chunk's counters on the host.
  const bool per_chunk_counts = spec.algorithm == Algorithm::csdl || launcher_.counts_statistics();
  auto* carry = carry_.as<ChunkCarry>();
  RunResult total;
  for (std::size_t first = 0, c = 0; first < n; first += chunk, ++c) {
    args.n = std::min(chunk, n - first);
    args.chunk_start = first;
    args.in = in_bytes + first * size_of(spec.dtype);
    args.flags = flags ? flags + first * size_of(spec.flags_dtype) : nullptr;
    args.carry_in = c > 0 ? carry + (c - 1) % 2 : nullptr;
    args.carry_out = first + args.n < n ? carry + c % 2 : nullptr;
    if (c == 0 || per_chunk_counts) check(cudaEventRecord(start_, stream_), "recording an event");
    launcher_.launch(args, workspace, workspace_.size(), stream_);
    if (first + args.n < n && !per_chunk_counts) continue;
    const RunResult part =
        timed_chained_result(device_.name, start_, end_, stream_, spec.algorithm == Algorithm::csdl,
                             launcher_.counts_statistics(), workspace_.state());
    detail::add_up(total, part);
  }
  return total;
}

}  // namespace gpuscan::cuda
