#include "cuda/cuda_compactor.hpp"

#include "cuda/check.hpp"
#include "cuda/cuda_scanner.hpp"
#include "cuda/memory.hpp"

namespace gpuscan::cuda {

CudaCompactor::CudaCompactor(const DeviceInfo& device, cudaStream_t stream, const CompactSpec& spec,
                             const detail::ScanPolicy& policy, const testing::Options& options)
    : device_(device), stream_(stream), launcher_(spec, policy, options) {
  check(cudaEventCreate(&start_), "creating an event");
  check(cudaEventCreate(&end_), "creating an event");
}

CudaCompactor::~CudaCompactor() {
  cudaEventDestroy(start_);
  cudaEventDestroy(end_);
}

RunResult CudaCompactor::run(const detail::BufferImpl& in, detail::BufferImpl& out,
                             detail::BufferImpl& count, std::size_t n, Value constant,
                             const detail::BufferImpl* aux) {
  const CompactSpec& spec = launcher_.spec();
  CompactArgs args;
  args.in = dynamic_cast<const DeviceMemory&>(in).data();
  args.out = dynamic_cast<DeviceMemory&>(out).data();
  args.count = dynamic_cast<DeviceMemory&>(count).as<std::uint64_t>();
  args.n = n;
  args.constant_bits = constant.bits;
  // The aux buffer: select-flagged's flags (read), or the second output (written).
  if (aux) {
    void* data = dynamic_cast<const DeviceMemory&>(*aux).data();
    if (spec.compaction == Compaction::select_flagged) {
      args.flags = data;
    } else {
      args.second = data;
    }
  }
  void* workspace = workspace_.reserve(launcher_.workspace_bytes(n), stream_);
  check(cudaEventRecord(start_, stream_), "recording an event");
  launcher_.launch(args, workspace, workspace_.size(), stream_);
  return timed_chained_result(device_.name, start_, end_, stream_,
                              spec.algorithm == Algorithm::csdl, launcher_.counts_statistics(),
                              workspace_.state());
}

}  // namespace gpuscan::cuda
