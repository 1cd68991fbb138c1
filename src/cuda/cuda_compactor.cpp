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
                             const detail::BufferImpl* flags, const detail::BufferImpl* second,
                             std::size_t chunk) {
  const CompactSpec& spec = launcher_.spec();
  CompactArgs args;
  args.in = dynamic_cast<const DeviceMemory&>(in).data();
  args.out = dynamic_cast<DeviceMemory&>(out).data();
  args.count = dynamic_cast<DeviceMemory&>(count).as<std::uint64_t>();
  args.constant_bits = constant.bits;
  // The flags (read); the second output: partition's rejected elements or run-length
  // encoding's lengths (written).
  if (flags) args.flags = dynamic_cast<const DeviceMemory&>(*flags).data();
  if (second) args.second = dynamic_cast<const DeviceMemory&>(*second).data();
  void* workspace = workspace_.reserve(launcher_.workspace_bytes(std::min(n, chunk)), stream_);
  // Only csdl (whose give-ups must be seen) and the statistics variant read each chunk's
  // counters on the host.
  const bool per_chunk_counts = spec.algorithm == Algorithm::csdl || launcher_.counts_statistics();
  RunResult total;
  launcher_.launch_chunks(
      args, n, chunk, carry_.as<ChunkCarry>(), workspace, workspace_.size(), stream_,
      [&](std::uint64_t c) {
        if (c == 0 || per_chunk_counts)
          check(cudaEventRecord(start_, stream_), "recording an event");
      },
      [&](bool last) {
        if (!last && !per_chunk_counts) return;
        detail::add_up(total,
                       timed_chained_result(device_.name, start_, end_, stream_,
                                            spec.algorithm == Algorithm::csdl,
                                            launcher_.counts_statistics(), workspace_.state()));
      });
  return total;
}

}  // namespace gpuscan::cuda
