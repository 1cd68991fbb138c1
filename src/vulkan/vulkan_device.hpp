// The Vulkan backend behind gpuscan::Device.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "core/backend.hpp"
#include "vulkan/context.hpp"
#include "vulkan/pipeline_cache.hpp"

namespace gpuscan::vulkan {

class VulkanDevice : public detail::DeviceImpl {
 public:
  VulkanDevice(std::shared_ptr<Instance> instance, const Instance::PhysicalDevice& physical);

  const DeviceInfo& info() const override { return context_->info(); }
  std::shared_ptr<detail::BufferImpl> allocate(std::size_t bytes) override;
  void upload(detail::BufferImpl& destination, std::span<const std::byte> source) override;
  void download(const detail::BufferImpl& source, std::span<std::byte> destination,
                std::size_t source_offset = 0) override;
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

 private:
  std::shared_ptr<Context> context_;
  std::shared_ptr<PipelineCache> pipelines_;
};

std::vector<DeviceInfo> list_devices();
// The best device, or the first whose name contains `name` (case-insensitive).
std::shared_ptr<detail::DeviceImpl> open_device(std::string_view name);

}  // namespace gpuscan::vulkan
