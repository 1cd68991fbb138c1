// The CUDA backend behind gpuscan::Compactor: one compaction launcher and its workspace, run
// synchronously and timed with events, as CudaScanner runs a scan.
#pragma once

#include "core/backend.hpp"
#include "cuda/compaction_launcher.hpp"
#include "cuda/memory.hpp"
#include "cuda/scan_launcher.hpp"

namespace gpuscan::cuda {

class CudaCompactor : public detail::CompactorImpl {
 public:
  CudaCompactor(const DeviceInfo& device, cudaStream_t stream, const CompactSpec& spec,
                const detail::ScanPolicy& policy, const testing::Options& options);
  ~CudaCompactor() override;

  std::size_t max_elements() const override { return launcher_.max_elements(); }
  std::size_t chunk_granule() const override { return launcher_.tile_elements(); }
  // Select-if, select-flagged and unique (in_place.cuh; the Compactor refuses the others).
  bool compacts_in_place() const override { return true; }
  RunResult run(const detail::BufferImpl& in, detail::BufferImpl& out, detail::BufferImpl& count,
                std::size_t n, Value constant, const detail::BufferImpl* flags,
                const detail::BufferImpl* second, std::size_t chunk) override;

 private:
  const DeviceInfo& device_;
  cudaStream_t stream_;
  CompactionLauncher launcher_;
  OwnedWorkspace workspace_;
  DeviceMemory carry_;  // two ChunkCarry slots (compaction_launch.hpp)
  cudaEvent_t start_ = nullptr, end_ = nullptr;
};

}  // namespace gpuscan::cuda
