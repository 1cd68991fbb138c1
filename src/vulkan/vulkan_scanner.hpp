// The Vulkan backend behind gpuscan::Scanner: one algorithm's kernels plus the
// workspace (spine, control words) and timestamps they run with.
#pragma once

#include <memory>

#include "core/backend.hpp"
#include "vulkan/scan_kernels.hpp"
#include "vulkan/timestamps.hpp"

namespace gpuscan::vulkan {

class VulkanScanner : public detail::ScannerImpl {
 public:
  VulkanScanner(std::shared_ptr<const Context> context, std::shared_ptr<PipelineCache> pipelines,
                const ScanSpec& spec, const testing::Options& options);
  std::size_t max_elements() const override { return kernels_.max_elements(); }
  std::size_t offset_granule() const override;
  RunResult run(const detail::BufferImpl& in, std::size_t in_offset, detail::BufferImpl& out,
                std::size_t out_offset, std::size_t n, Value init) override;
  RunResult run_rows(const detail::BufferImpl& in, std::size_t in_offset, detail::BufferImpl& out,
                     std::size_t out_offset, std::size_t n, Value init, const Rows& rows) override;

 private:
  RunResult run_with(const detail::BufferImpl& in, std::size_t in_offset, detail::BufferImpl& out,
                     std::size_t out_offset, std::size_t n, Value init, const RowLayout* rows);

  std::shared_ptr<const Context> context_;
  std::shared_ptr<PipelineCache> pipelines_;
  ScanSpec spec_;
  ScanKernels kernels_;
  VulkanBuffer control_;
  std::unique_ptr<SpineBuffer> spine_;            // grown to the largest n run so far
  std::unique_ptr<VulkanBuffer> segment_starts_;  // grown to the most starts a run had
  Timestamps timestamps_;
};

}  // namespace gpuscan::vulkan
