// The CUDA backend: NVIDIA GPUs through the CUDA runtime.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string_view>
#include <vector>

#include "core/backend.hpp"
#include "core/policy.hpp"

namespace gpuscan::cuda {

// Every CUDA GPU; empty where there is no driver or no GPU.
std::vector<DeviceInfo> list_devices();
// The first CUDA GPU whose name contains `name` (case-insensitive; empty: the first).
std::shared_ptr<detail::DeviceImpl> open_device(std::string_view name);
// The CUDA GPU of this device number.
std::shared_ptr<detail::DeviceImpl> open_device(int ordinal);

class CudaDevice : public detail::DeviceImpl {
 public:
  CudaDevice(int ordinal, DeviceInfo info);
  ~CudaDevice() override;

  const DeviceInfo& info() const override { return info_; }
  std::shared_ptr<detail::BufferImpl> allocate(std::size_t bytes) override;
  void upload(detail::BufferImpl& destination, std::span<const std::byte> source) override;
  void download(const detail::BufferImpl& source, std::span<std::byte> destination,
                std::size_t source_offset) override;
  std::unique_ptr<detail::ScannerImpl> make_scanner(const ScanSpec& spec,
                                                    const testing::Options& options) override;
  std::unique_ptr<detail::CompactorImpl> make_compactor(const CompactSpec& spec,
                                                        const testing::Options& options) override;
  testing::CompactionBenchResult benchmark_compaction(
      const testing::CompactionBenchCase& bench_case, std::span<const std::byte> input,
      std::span<const std::byte> flags, std::uint64_t expected_count,
      std::span<const std::byte> expected_output) override;
  std::unique_ptr<detail::BenchTarget> bench_target(const testing::BenchCase& bench_case,
                                                    std::span<const std::byte> input) override;

  void select() const;
  cudaStream_t stream() const { return stream_; }
  // The policy table's row for this GPU and an element size.
  const detail::ScanPolicy& policy(DType dtype) const;

 private:
  int ordinal_;
  int major_ = 0, minor_ = 0;  // compute capability
  DeviceInfo info_;
  cudaStream_t stream_ = nullptr;
};

}  // namespace gpuscan::cuda
