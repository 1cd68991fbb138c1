#include "vulkan/vulkan_compactor.hpp"

#include <string>

#include "gpuscan/error.hpp"

namespace gpuscan::vulkan {

VulkanCompactor::VulkanCompactor(std::shared_ptr<const Context> context,
                                 std::shared_ptr<PipelineCache> pipelines, const CompactSpec& spec,
                                 const testing::Options& options)
    : context_(context),
      pipelines_(pipelines),
      spec_(spec),
      kernels_(context, pipelines, spec, options),
      control_(context, ScanKernels::control_bytes),
      timestamps_(context, 1) {}

RunResult VulkanCompactor::run(const detail::BufferImpl& in, detail::BufferImpl& out,
                               detail::BufferImpl& count, std::size_t n, Value constant,
                               const detail::BufferImpl* aux) {
  const std::size_t spine_bytes = kernels_.spine_bytes(n);
  if (!spine_ || spine_->half_bytes() < spine_bytes)
    spine_ = std::make_unique<SpineBuffer>(context_, spine_bytes);
  const CompactionBuffers buffers{dynamic_cast<const VulkanBuffer&>(in),
                                  dynamic_cast<const VulkanBuffer&>(out),
                                  aux ? &dynamic_cast<const VulkanBuffer&>(*aux) : nullptr,
                                  dynamic_cast<const VulkanBuffer&>(count),
                                  *spine_,
                                  control_};
  const CompactionBindingSet set(context_, pipelines_->set_layout(), buffers);
  context_->submit([&](VkCommandBuffer cmd) {
    timestamps_.reset(cmd);
    timestamps_.begin(cmd, 0);
    kernels_.record(cmd, buffers, set.handle(), n, constant);
    timestamps_.end(cmd, 0);
  });
  RunResult result{timestamps_.milliseconds().front(), std::nullopt};
  if (spec_.algorithm == Algorithm::csdl || kernels_.counts_statistics()) {
    RunCounts counts{};
    download(context_, control_, std::as_writable_bytes(std::span(&counts, 1)), RunCounts::offset);
    if (counts.abandoned != 0) {
      throw ForwardProgressError(
          "csdl on " + context_->info().name + ": " + std::to_string(counts.abandoned) +
          " look-backs gave up waiting for a predecessor that made no progress "
          "(the device does not guarantee forward progress); use csdldf");
    }
    if (kernels_.counts_statistics()) result.statistics = counts.statistics();
  }
  return result;
}

}  // namespace gpuscan::vulkan
