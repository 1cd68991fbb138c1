#include "vulkan/vulkan_scanner.hpp"

#include <cstdint>
#include <numeric>
#include <string>

#include "gpuscan/error.hpp"
#include "shaders/common/interface.h"
#include "vulkan/timed_run.hpp"

namespace gpuscan::vulkan {

VulkanScanner::VulkanScanner(std::shared_ptr<const Context> context,
                             std::shared_ptr<PipelineCache> pipelines, const ScanSpec& spec,
                             const testing::Options& options)
    : context_(context),
      pipelines_(pipelines),
      spec_(spec),
      kernels_(context, pipelines, spec.dtype, spec.op, spec.kind, spec.algorithm, options),
      control_(context, ScanKernels::control_bytes),
      timestamps_(context, 1) {}

std::size_t VulkanScanner::offset_granule() const {
  // Whole tiles, and a multiple of the storage-buffer offset alignment in bytes.
  const std::size_t alignment = context_->limits().minStorageBufferOffsetAlignment;
  const std::size_t element = size_of(spec_.dtype);
  return std::lcm(std::size_t{kernels_.shape().elements()}, std::lcm(alignment, element) / element);
}

RunResult VulkanScanner::run(const detail::BufferImpl& in, std::size_t in_offset,
                             detail::BufferImpl& out, std::size_t out_offset, std::size_t n,
                             Value init) {
  return run_with(in, in_offset, out, out_offset, n, init, nullptr);
}

RunResult VulkanScanner::run_rows(const detail::BufferImpl& in, std::size_t in_offset,
                                  detail::BufferImpl& out, std::size_t out_offset, std::size_t n,
                                  Value init, const Rows& rows) {
  // One whole row is one scan: the plain pipeline, without the segmented work.
  if (rows.phase == 0 && rows.length >= n && (spec_.kind != Kind::reduce || out_offset == 0)) {
    return run_with(in, in_offset, out, out_offset, n, init, nullptr);
  }
  RowLayout layout = row_layout(rows.length, rows.phase, n, rows.lead);
  if (spec_.kind == Kind::reduce) {
    // One output per row, from any row on: the binding starts at the buffer's start (a
    // binding offset must be aligned) and the kernel adds the first row.
    if (out_offset > UINT32_MAX) throw UsageError("more than 2^32 rows in one Vulkan buffer");
    layout.first_row = static_cast<std::uint32_t>(out_offset);
    out_offset = 0;
  }
  return run_with(in, in_offset, out, out_offset, n, init, &layout);
}

RunResult VulkanScanner::run_with(const detail::BufferImpl& in, std::size_t in_offset,
                                  detail::BufferImpl& out, std::size_t out_offset, std::size_t n,
                                  Value init, const RowLayout* rows) {
  if (n > kernels_.max_elements()) {
    throw UsageError(std::to_string(n) + " elements are more than one run takes on " +
                     context_->info().name + " (at most " +
                     std::to_string(kernels_.max_elements()) + ")");
  }
  const std::size_t spine_bytes = kernels_.spine_bytes(n);
  if (!spine_ || spine_->half_bytes() < spine_bytes)
    spine_ = std::make_unique<SpineBuffer>(context_, spine_bytes);
  const std::size_t element = size_of(spec_.dtype);
  const ScanBuffers buffers{dynamic_cast<const VulkanBuffer&>(in),
                            dynamic_cast<const VulkanBuffer&>(out),
                            *spine_,
                            control_,
                            in_offset * element,
                            out_offset * element};
  const BindingSet set(context_, pipelines_->set_layout(), buffers);
  // Only csdl can give up a look-back; only the statistics variant counts.
  return timed_run(context_, timestamps_, control_, spec_.algorithm == Algorithm::csdl,
                   kernels_.counts_statistics(), [&](VkCommandBuffer cmd) {
                     kernels_.record(cmd, buffers, set.handle(), n, init, rows);
                   });
}

}  // namespace gpuscan::vulkan
