// The Vulkan backend behind gpuscan::Compactor: the compaction kernels plus the workspace
// (spine, control words) and timestamps they run with.
#pragma once

#include <memory>

#include "core/backend.hpp"
#include "vulkan/compaction_kernels.hpp"
#include "vulkan/timestamps.hpp"

namespace gpuscan::vulkan {

class VulkanCompactor : public detail::CompactorImpl {
 public:
  VulkanCompactor(std::shared_ptr<const Context> context, std::shared_ptr<PipelineCache> pipelines,
                  const CompactSpec& spec, const testing::Options& options);
  std::size_t max_elements() const override { return kernels_.max_elements(); }
  bool compacts_in_place() const override { return true; }
  std::size_t chunk_granule() const override { return kernels_.shape().elements(); }
  std::size_t max_total_elements() const override { return kernels_.max_total_elements(); }
  RunResult run(const detail::BufferImpl& in, detail::BufferImpl& out, detail::BufferImpl& count,
                std::size_t n, Value constant, const detail::BufferImpl* flags,
                const detail::BufferImpl* second, std::size_t chunk) override;

 private:
  std::shared_ptr<const Context> context_;
  std::shared_ptr<PipelineCache> pipelines_;
  CompactSpec spec_;
  CompactionKernels kernels_;
  VulkanBuffer control_;
  VulkanBuffer carry_;                  // what a chunk hands the next (compaction_interface.h)
  std::unique_ptr<SpineBuffer> spine_;  // grown to the largest n run so far
  Timestamps timestamps_;
};

}  // namespace gpuscan::vulkan
