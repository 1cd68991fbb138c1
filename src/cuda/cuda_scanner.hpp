// The CUDA Scanner: one launcher and its workspace, run synchronously and timed with events.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "cuda/scan_launcher.hpp"

namespace gpuscan::cuda {

// Ends a timed run of a chained kernel that began with `start` on `stream`: its time, csdl's
// ForwardProgressError where a look-back gave up, and with `statistics` the counts.
RunResult timed_chained_result(const std::string& device_name, cudaEvent_t start, cudaEvent_t end,
                               cudaStream_t stream, bool csdl, bool statistics,
                               const ChainState* state_on_device);

class CudaScanner : public detail::ScannerImpl {
 public:
  CudaScanner(const DeviceInfo& device, cudaStream_t stream, const ScanSpec& spec,
              const detail::ScanPolicy& policy, const testing::Options& options);
  ~CudaScanner() override;

  std::size_t max_elements() const override { return launcher_.max_elements(); }
  // Offsets keep 16-byte alignment, which the vector loads need.
  std::size_t offset_granule() const override { return 16 / size_of(spec_.dtype); }
  RunResult run(const detail::BufferImpl& in, std::size_t in_offset, detail::BufferImpl& out,
                std::size_t out_offset, std::size_t n, Value init) override;
  RunResult run_rows(const detail::BufferImpl& in, std::size_t in_offset, detail::BufferImpl& out,
                     std::size_t out_offset, std::size_t n, Value init, const Rows& rows) override;

 private:
  RunResult run_with(const detail::BufferImpl& in, std::size_t in_offset, detail::BufferImpl& out,
                     std::size_t out_offset, std::size_t n, Value init, const RowArgs& rows);

  const DeviceInfo& device_;
  cudaStream_t stream_;
  ScanSpec spec_;
  ScanLauncher launcher_;
  OwnedWorkspace workspace_;
  DeviceMemory segment_starts_;            // a segmented run's, grown to the most a run had
  std::vector<std::int64_t> wide_starts_;  // the same on the host, as the kernels read them
  cudaEvent_t start_ = nullptr, end_ = nullptr;
};

}  // namespace gpuscan::cuda
