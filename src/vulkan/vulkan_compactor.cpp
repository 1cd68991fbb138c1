#include "vulkan/vulkan_compactor.hpp"

#include <string>

#include "gpuscan/error.hpp"
#include "vulkan/timed_run.hpp"

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
  // Out over in (select and unique; Compactor checked it): the in-place kernel.
  const bool in_place = &in == &out;
  const std::size_t spine_bytes = kernels_.spine_bytes(n, in_place);
  if (!spine_ || spine_->half_bytes() < spine_bytes)
    spine_ = std::make_unique<SpineBuffer>(context_, spine_bytes);
  const CompactionBuffers buffers{dynamic_cast<const VulkanBuffer&>(in),
                                  dynamic_cast<const VulkanBuffer&>(out),
                                  aux ? &dynamic_cast<const VulkanBuffer&>(*aux) : nullptr,
                                  dynamic_cast<const VulkanBuffer&>(count),
                                  *spine_,
                                  control_};
  const CompactionBindingSet set(context_, pipelines_->set_layout(), buffers);
  try {
    return timed_run(context_, timestamps_, control_, spec_.algorithm == Algorithm::csdl,
                     kernels_.counts_statistics(), [&](VkCommandBuffer cmd) {
                       kernels_.record(cmd, buffers, set.handle(), n, constant, in_place);
                     });
  } catch (const ForwardProgressError& e) {
    // csdl gave up: its prefixes are wrong, and in place some were scattered over the input.
    if (!in_place) throw;
    throw ForwardProgressError(std::string(e.what()) +
                               "; the run was in place, so the buffer no longer holds its input");
  }
}

}  // namespace gpuscan::vulkan
