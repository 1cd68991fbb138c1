#include "vulkan/vulkan_compactor.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "gpuscan/error.hpp"
#include "shaders/common/compaction_interface.h"
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
      carry_(context, GS_COMPACT_CARRY_BUFFER_WORDS * sizeof(std::uint32_t)),
      timestamps_(context, 1) {}

RunResult VulkanCompactor::run(const detail::BufferImpl& in, detail::BufferImpl& out,
                               detail::BufferImpl& count, std::size_t n, Value constant,
                               const detail::BufferImpl* flags, const detail::BufferImpl* second,
                               std::size_t chunk) {
  // Out over in (select and unique; Compactor checked it and hands it over as one chunk):
  // the in-place kernel.
  const bool in_place = &in == &out;
  const std::size_t spine_bytes = kernels_.spine_bytes(std::min(n, chunk), in_place);
  if (!spine_ || spine_->half_bytes() < spine_bytes)
    spine_ = std::make_unique<SpineBuffer>(context_, spine_bytes);
  // One binding set a chunk (its input window), every chunk in one command buffer: the
  // running count goes from chunk to chunk on the device (docs/protocol.md, "Compaction in
  // chunks").
  const auto vulkan_buffer = [](const detail::BufferImpl* buffer) {
    return buffer ? &dynamic_cast<const VulkanBuffer&>(*buffer) : nullptr;
  };
  // Chunks whose outputs may reach past what one binding holds write them through buffer
  // device addresses (the wide pipeline); in place is one run over one binding.
  const auto wide = [&](std::size_t first) {
    return !in_place && !kernels_.binding_holds(first, std::min(chunk, n - first));
  };
  if (wide(n - 1 - (n - 1) % chunk)) {
    const VulkanBuffer* outputs[] = {vulkan_buffer(&out), vulkan_buffer(second)};
    for (const VulkanBuffer* output : outputs) {
      if (output && (output->device_address() == 0 || !kernels_.writes_wide())) {
        throw UsageError("the outputs of " + std::to_string(n) +
                         " elements reach past one storage-buffer binding on " +
                         context_->info().name +
                         ", which takes bufferDeviceAddress and an output buffer with a "
                         "device address");
      }
    }
  }
  std::vector<CompactionBuffers> buffers;
  std::vector<std::unique_ptr<CompactionBindingSet>> sets;
  for (std::size_t first = 0; first < n; first += chunk) {
    buffers.push_back({dynamic_cast<const VulkanBuffer&>(in),
                       dynamic_cast<const VulkanBuffer&>(out), vulkan_buffer(flags),
                       vulkan_buffer(second), dynamic_cast<const VulkanBuffer&>(count), *spine_,
                       control_, carry_, first});
    sets.push_back(std::make_unique<CompactionBindingSet>(context_, pipelines_->set_layout(),
                                                          buffers.back(), size_of(spec_.dtype),
                                                          size_of(spec_.flags_dtype)));
  }
  try {
    return timed_run(context_, timestamps_, control_, spec_.algorithm == Algorithm::csdl,
                     kernels_.counts_statistics(), [&](VkCommandBuffer cmd) {
                       for (std::size_t c = 0; c < buffers.size(); ++c) {
                         const std::size_t first = c * chunk;
                         const CompactionChunk where{static_cast<std::uint32_t>(c), first,
                                                     first + chunk < n, wide(first)};
                         kernels_.record(cmd, buffers[c], sets[c]->handle(),
                                         std::min(chunk, n - first), constant, in_place, where);
                       }
                     });
  } catch (const ForwardProgressError& e) {
    // csdl gave up: its prefixes are wrong, and in place some were scattered over the input.
    if (!in_place) throw;
    throw ForwardProgressError(std::string(e.what()) +
                               "; the run was in place, so the buffer no longer holds its input");
  }
}

}  // namespace gpuscan::vulkan
