#include "cuda/cuda_scanner.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "cuda/check.hpp"

namespace gpuscan::cuda {

CudaScanner::CudaScanner(const DeviceInfo& device, cudaStream_t stream, const ScanSpec& spec,
                         const detail::ScanPolicy& policy, const testing::Options& options)
    : device_(device),
      stream_(stream),
      spec_(spec),
      launcher_(spec.dtype, spec.op, spec.kind, spec.algorithm, policy, options) {
  check(cudaEventCreate(&start_), "creating an event");
  check(cudaEventCreate(&end_), "creating an event");
}

CudaScanner::~CudaScanner() {
  cudaEventDestroy(start_);
  cudaEventDestroy(end_);
}

RunResult CudaScanner::run(const detail::BufferImpl& in, std::size_t in_offset,
                           detail::BufferImpl& out, std::size_t out_offset, std::size_t n,
                           Value init) {
  return run_with(in, in_offset, out, out_offset, n, init, RowArgs{});
}

RunResult CudaScanner::run_rows(const detail::BufferImpl& in, std::size_t in_offset,
                                detail::BufferImpl& out, std::size_t out_offset, std::size_t n,
                                Value init, const Rows& rows) {
  if (rows.segments) {
    // The run's starts go to device memory of the scanner's, widened to the kernels' 64-bit
    // offsets (the stream's order keeps them until the run has read them: run_with waits
    // for it).
    if (n >= (std::size_t{1} << 32) || rows.segment_starts.size() > UINT32_MAX) {
      throw UsageError("a segmented run on CUDA takes fewer than 2^32 elements and starts");
    }
    wide_starts_.assign(rows.segment_starts.begin(), rows.segment_starts.end());
    const std::size_t bytes = std::max<std::size_t>(wide_starts_.size() * sizeof(std::int64_t), 8);
    if (segment_starts_.size() < bytes) segment_starts_ = DeviceMemory(bytes);
    check(cudaMemcpyAsync(segment_starts_.data(), wide_starts_.data(),
                          wide_starts_.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice,
                          stream_),
          "copying the segment starts");
    return run_with(in, in_offset, out, out_offset, n, init,
                    segment_args(segment_starts_.as<std::int64_t>(), 0,
                                 static_cast<std::uint32_t>(wide_starts_.size()), rows.lead.bits));
  }
  return run_with(in, in_offset, out, out_offset, n, init,
                  row_args(rows.length, rows.phase, rows.lead.bits));
}

RunResult CudaScanner::run_with(const detail::BufferImpl& in, std::size_t in_offset,
                                detail::BufferImpl& out, std::size_t out_offset, std::size_t n,
                                Value init, const RowArgs& rows) {
  if (n > launcher_.max_elements()) {
    throw UsageError(std::to_string(n) + " elements are more than one run takes (at most " +
                     std::to_string(launcher_.max_elements()) + ")");
  }
  const std::size_t element = size_of(spec_.dtype);
  const auto* source = dynamic_cast<const DeviceMemory&>(in).as<std::byte>() + in_offset * element;
  auto* target = dynamic_cast<DeviceMemory&>(out).as<std::byte>() + out_offset * element;
  void* workspace = workspace_.reserve(launcher_, n, stream_);
  check(cudaEventRecord(start_, stream_), "recording an event");
  launcher_.launch(source, target, n, init, nullptr, workspace, workspace_.size(), stream_, rows);
  return timed_chained_result(device_.name, start_, end_, stream_,
                              spec_.algorithm == Algorithm::csdl, launcher_.counts_statistics(),
                              workspace_.state());
}

RunResult timed_chained_result(const std::string& device_name, cudaEvent_t start, cudaEvent_t end,
                               cudaStream_t stream, bool csdl, bool statistics,
                               const ChainState* state_on_device) {
  check(cudaEventRecord(end, stream), "recording an event");
  check(cudaEventSynchronize(end), "running the kernels");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, end), "timing the run");
  RunResult result{ms, std::nullopt};
  // Only csdl can give up a look-back; only the statistics variant counts.
  if (csdl || statistics) {
    ChainState state{};
    check(cudaMemcpyAsync(&state, state_on_device, sizeof(state), cudaMemcpyDeviceToHost, stream),
          "reading the run's counts");
    check(cudaStreamSynchronize(stream), "reading the run's counts");
    const RunControl& counts = state.last_counts();
    if (counts.abandoned != 0) {
      throw ForwardProgressError("csdl on " + device_name + ": " +
                                 std::to_string(counts.abandoned) +
                                 " look-backs gave up waiting for a predecessor that made no "
                                 "progress (the device does not guarantee forward progress); use "
                                 "csdldf");
    }
    if (statistics) result.statistics = counts.statistics();
  }
  return result;
}

}  // namespace gpuscan::cuda
