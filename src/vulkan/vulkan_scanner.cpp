#include "vulkan/vulkan_scanner.hpp"

#include <algorithm>
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
  if (rows.segments) {
    // The starts go to a buffer of the scanner's, and the segment of start j to output
    // element out_offset + j: the kernel adds out_offset, as it adds a batched run's first
    // row (an offset binding would have to be aligned).
    if (n >= (std::size_t{1} << 31)) {
      throw UsageError("a segmented run on Vulkan takes fewer than 2^31 elements");
    }
    if (kernels_.shape_for(n, true).elements() > GS_MAX_TILE_ELEMENTS) {
      throw UsageError("segmented scans take tiles of at most " +
                       std::to_string(GS_MAX_TILE_ELEMENTS) + " elements");
    }
    const std::size_t bytes = std::max<std::size_t>(rows.segment_starts.size_bytes(), 4);
    if (rows.segment_starts.size() > UINT32_MAX ||
        bytes > context_->limits().maxStorageBufferRange) {
      throw UsageError(std::to_string(rows.segment_starts.size()) +
                       " segment starts in one run are more than a Vulkan binding holds");
    }
    if (spec_.kind == Kind::reduce && out_offset + rows.segment_starts.size() > UINT32_MAX) {
      throw UsageError("more than 2^32 segments in one Vulkan buffer");
    }
    if (!segment_starts_ || segment_starts_->allocated() < bytes) {
      segment_starts_ = std::make_unique<VulkanBuffer>(context_, bytes);
    }
    if (!rows.segment_starts.empty()) {
      upload(context_, *segment_starts_, std::as_bytes(rows.segment_starts));
    }
    RowLayout layout{static_cast<std::uint32_t>(rows.segment_starts.size()), 0, rows.lead, 0, true};
    if (spec_.kind == Kind::reduce) {
      layout.first_row = static_cast<std::uint32_t>(out_offset);
      out_offset = 0;
    }
    return run_with(in, in_offset, out, out_offset, n, init, &layout);
  }
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
                            out_offset * element,
                            rows != nullptr && rows->segments ? segment_starts_.get() : nullptr};
  const BindingSet set(context_, pipelines_->set_layout(), buffers);
  // Only csdl can give up a look-back; only the statistics variant counts.
  return timed_run(context_, timestamps_, control_, spec_.algorithm == Algorithm::csdl,
                   kernels_.counts_statistics(), [&](VkCommandBuffer cmd) {
                     kernels_.record(cmd, buffers, set.handle(), n, init, rows);
                   });
}

}  // namespace gpuscan::vulkan
