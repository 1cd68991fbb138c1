// gpuscan::vulkan::Plan (gpuscan/vulkan.hpp): scans recorded into the application's command
// buffers. Argument checks here; the commands are ScanKernels::record_resubmittable's.
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/reference.hpp"
#include "gpuscan/error.hpp"
#include "gpuscan/vulkan.hpp"
#include "shaders/common/interface.h"
#include "vulkan/context.hpp"
#include "vulkan/pipeline_cache.hpp"
#include "vulkan/scan_kernels.hpp"

namespace gpuscan::vulkan {
namespace {

// The workspace: the run's control words first, the spine from this offset (a multiple of
// every minStorageBufferOffsetAlignment Vulkan allows).
constexpr VkDeviceSize kSpineOffset = 256;
static_assert(ScanKernels::control_bytes <= kSpineOffset);

// One Context and pipeline cache per VkDevice, shared by its Plans and released with the
// last of them.
struct DeviceState {
  std::shared_ptr<Context> context;
  std::shared_ptr<PipelineCache> pipelines;
};

std::shared_ptr<DeviceState> device_state(const DeviceHandles& handles) {
  static std::mutex& mutex = *new std::mutex;
  static std::map<VkDevice, std::weak_ptr<DeviceState>>& states =
      *new std::map<VkDevice, std::weak_ptr<DeviceState>>;
  const std::lock_guard lock(mutex);
  if (auto state = states[handles.device].lock()) return state;
  auto state = std::make_shared<DeviceState>();
  state->context = std::make_shared<Context>(
      ApplicationDevice{handles.instance, handles.physical_device, handles.device,
                        handles.queue_family, handles.enabled_features});
  state->pipelines = std::make_shared<PipelineCache>(state->context, /*push_descriptors=*/true);
  states[handles.device] = state;
  return state;
}

// `alignment`: what the range's offset must be a multiple of.
void check_range(const char* name, const BufferRange& range, VkDeviceSize needed,
                 VkDeviceSize alignment, const char* alignment_name) {
  const std::string what = std::string(name) + " range";
  if (range.buffer == VK_NULL_HANDLE) throw UsageError(what + " has no buffer");
  if (range.size == VK_WHOLE_SIZE) {
    throw UsageError(what +
                     ": give its size in bytes (not VK_WHOLE_SIZE), so that n can be "
                     "checked against it");
  }
  if (range.size < needed) {
    throw UsageError(what + " holds " + std::to_string(range.size) + " bytes; the scan needs " +
                     std::to_string(needed));
  }
  if (range.offset % alignment != 0) {
    throw UsageError(what + " offset " + std::to_string(range.offset) + " is not a multiple of " +
                     alignment_name + " (" + std::to_string(alignment) + " bytes)");
  }
}

// The descriptor of a range whose data may begin anywhere a whole element can: bound from
// the offset below it that the device's binding alignment allows, `shift` elements before
// the data.
VkDescriptorBufferInfo bind_from_aligned(const BufferRange& range, VkDeviceSize bytes,
                                         VkDeviceSize alignment, VkDeviceSize element,
                                         std::uint32_t& shift) {
  const VkDeviceSize base = range.offset / alignment * alignment;
  shift = static_cast<std::uint32_t>((range.offset - base) / element);
  return {range.buffer, base, range.offset - base + bytes};
}

// The init value a record takes: the given one, of the spec's dtype, or the identity.
Value checked_init(const ScanSpec& spec, const std::optional<Value>& init) {
  const Value start = init.value_or(reference::identity_value(spec.dtype, spec.op));
  if (start.dtype != spec.dtype) {
    throw UsageError("init value is " + std::string(to_string(start.dtype)) + " but the scan is " +
                     std::string(to_string(spec.dtype)));
  }
  return start;
}

bool overlap(const BufferRange& a, VkDeviceSize a_bytes, const BufferRange& b,
             VkDeviceSize b_bytes) {
  return a.buffer == b.buffer && a.offset < b.offset + b_bytes && b.offset < a.offset + a_bytes;
}

}  // namespace

DeviceRequirements::DeviceRequirements(VkInstance instance, VkPhysicalDevice physical) {
  Instance::use_application_instance(instance);
  const DeviceInfo info = Instance::describe(physical).info;
  const DeviceFeatures has = DeviceFeatures::supported(physical, info);
  if (!has.push_descriptor) {
    throw DeviceError(info.name + " lacks " + VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME +
                      ", which recorded scans need");
  }
  extensions = {VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME};
  features.pNext = &vulkan12;
  vulkan12.pNext = &vulkan13;
  vulkan12.vulkanMemoryModel = VK_TRUE;
  vulkan13.synchronization2 = VK_TRUE;
  vulkan13.maintenance4 = VK_TRUE;
  vulkan13.subgroupSizeControl = has.subgroup_size_control;
  vulkan13.computeFullSubgroups = has.subgroup_size_control;
  features.features.shaderInt64 = has.int64;
  vulkan12.shaderSubgroupExtendedTypes = has.int64;
  features.features.shaderFloat64 = has.float64;
  vulkan12.shaderBufferInt64Atomics = has.int64_atomics;
}

namespace internal {

class PlanImpl {
 public:
  PlanImpl(const DeviceHandles& handles, const ScanSpec& spec, const Tuning& tuning)
      : state_(device_state(handles)),
        spec_(spec),
        kernels_(state_->context, state_->pipelines, spec.dtype, spec.op, spec.kind, spec.algorithm,
                 testing::Options{.tuning = tuning}) {}

  VkDeviceSize workspace_bytes(std::uint64_t max_n) const {
    return kSpineOffset + kernels_.spine_bytes_up_to(std::min(max_n, max_elements()));
  }
  // A binding may start up to one alignment before the data (bind_from_aligned).
  std::uint64_t max_elements() const {
    const Context& context = *state_->context;
    const VkDeviceSize range = context.limits().maxStorageBufferRange;
    const VkDeviceSize alignment = context.limits().minStorageBufferOffsetAlignment;
    return std::min<std::uint64_t>(kernels_.max_elements(),
                                   (range - alignment) / size_of(spec_.dtype));
  }
  const ScanSpec& spec() const { return spec_; }

  void record(VkCommandBuffer cmd, const BufferRange& in, const BufferRange& out, std::uint64_t n,
              const BufferRange& workspace, Value init) const {
    if (cmd == VK_NULL_HANDLE) throw UsageError("no command buffer to record into");
    if (n > max_elements()) {
      throw UsageError(std::to_string(n) + " elements are more than one recorded scan takes on " +
                       device_name() + " (at most " + std::to_string(max_elements()) +
                       "); record several scans, each with the last one's total as init");
    }
    const bool reduce = spec_.kind == Kind::reduce;
    if (n == 0) {
      if (reduce) fill_with_init(cmd, out, 1, init);  // a reduction of nothing
      return;
    }
    record_run(cmd, in, out, n, reduce ? 1 : n, workspace, init);
  }

  void record_rows(VkCommandBuffer cmd, const BufferRange& in, const BufferRange& out,
                   std::uint64_t rows, std::uint64_t row_length, const BufferRange& workspace,
                   Value init) const {
    if (cmd == VK_NULL_HANDLE) throw UsageError("no command buffer to record into");
    refuse_rts("batched");
    if (row_length != 0 && rows > UINT64_MAX / row_length) {
      throw UsageError(std::to_string(rows) + " rows of " + std::to_string(row_length) +
                       " elements are more than 2^64");
    }
    const std::uint64_t n = rows * row_length;
    if (n > max_rows_elements()) {
      throw UsageError(std::to_string(rows) + " rows of " + std::to_string(row_length) +
                       " elements are more than one recorded batched scan takes on " +
                       device_name() + " (at most " + std::to_string(max_rows_elements()) +
                       " elements); record several batches of whole rows");
    }
    const bool reduce = spec_.kind == Kind::reduce;
    if (n == 0) {
      if (reduce) fill_with_init(cmd, out, rows, init);  // rows of nothing
      return;
    }
    // One row is one plain scan, without the segmented work (as VulkanScanner::run_rows).
    if (rows == 1) return record_run(cmd, in, out, n, reduce ? 1 : n, workspace, init);
    const RowLayout layout = row_layout(row_length, 0, n, init);
    record_run(cmd, in, out, n, reduce ? rows : n, workspace, init, &layout);
  }

  void record_segments(VkCommandBuffer cmd, const BufferRange& in, const BufferRange& out,
                       std::uint64_t n, const BufferRange& offsets, std::uint64_t segments,
                       const BufferRange& workspace, Value init) const {
    if (cmd == VK_NULL_HANDLE) throw UsageError("no command buffer to record into");
    refuse_rts("segmented");
    if (n > max_rows_elements()) {
      throw UsageError(std::to_string(n) +
                       " elements are more than one recorded segmented scan takes on " +
                       device_name() + " (at most " + std::to_string(max_rows_elements()) +
                       "); record several scans, each on whole segments");
    }
    if (n > 0 && segments == 0) {
      throw UsageError(std::to_string(n) + " elements in no segments: the offsets end at n (" +
                       std::to_string(n) + "), so at least one segment holds them");
    }
    const Context& context = *state_->context;
    // The kernels read segments + 1 uint32 offsets (the last, n, ends the last segment).
    const VkDeviceSize range = context.limits().maxStorageBufferRange;
    if (segments >= UINT32_MAX || (segments + 1) * sizeof(std::uint32_t) > range) {
      throw UsageError(std::to_string(segments) + " segments are more than one binding of " +
                       std::to_string(range) + " bytes holds as uint32 offsets on " +
                       device_name());
    }
    const VkDeviceSize offsets_bytes = (segments + 1) * sizeof(std::uint32_t);
    const bool reduce = spec_.kind == Kind::reduce;
    if (n == 0) {
      if (reduce) fill_with_init(cmd, out, segments, init);  // segments of nothing
      return;
    }
    if (reduce && segments > max_elements()) {
      throw UsageError(std::to_string(segments) + " segments' reductions are more outputs than " +
                       "one binding takes on " + device_name() + " (at most " +
                       std::to_string(max_elements()) + ")");
    }
    if (kernels_.shape_for(n, true).elements() > GS_MAX_TILE_ELEMENTS) {
      throw UsageError("segmented scans take tiles of at most " +
                       std::to_string(GS_MAX_TILE_ELEMENTS) + " elements");
    }
    check_range("offsets", offsets, offsets_bytes, context.limits().minStorageBufferOffsetAlignment,
                "the device's minStorageBufferOffsetAlignment (the kernels bind the offsets "
                "from their first)");
    const RowLayout layout{.length = static_cast<std::uint32_t>(segments + 1),
                           .lead = init,
                           .segments = true,
                           .outputs_within_list = true};
    record_run(cmd, in, out, n, reduce ? segments : n, workspace, init, &layout, &offsets);
  }

 private:
  const std::string& device_name() const { return state_->context->info().name; }
  // Batched and segmented runs: the shaders' row arithmetic takes fewer than 2^31 elements.
  std::uint64_t max_rows_elements() const {
    return std::min<std::uint64_t>(max_elements(), (std::uint64_t{1} << 31) - 1);
  }
  void refuse_rts(const char* what) const {
    if (spec_.algorithm == Algorithm::rts) {
      throw UsageError(std::string(what) + " scans take csdldf (the default), not rts");
    }
  }

  // Writes init to `count` elements of `out`: the reductions of empty inputs, rows or
  // segments. A 32-bit pattern fills; other 64-bit values go into the command buffer in
  // updates of at most 65536 bytes (vkCmdUpdateBuffer's limit).
  void fill_with_init(VkCommandBuffer cmd, const BufferRange& out, std::uint64_t count,
                      Value init) const {
    if (count == 0) return;
    const Context& context = *state_->context;
    const VkDeviceSize element = size_of(spec_.dtype);
    if (count > UINT64_MAX / element) throw UsageError("more outputs than 2^64 bytes hold");
    const VkDeviceSize bytes = count * element;
    check_range("out", out, bytes, element, "the element size");
    const auto lo = static_cast<std::uint32_t>(init.bits);
    const auto hi = static_cast<std::uint32_t>(init.bits >> 32);
    if (element == 4 || lo == hi) {
      context.vk().vkCmdFillBuffer(cmd, out.buffer, out.offset, bytes, lo);
    } else {
      constexpr VkDeviceSize kMostPerUpdate = 65536;
      const std::vector<std::uint64_t> pattern(std::min(bytes, kMostPerUpdate) / element,
                                               init.bits);
      for (VkDeviceSize done = 0; done < bytes; done += kMostPerUpdate) {
        context.vk().vkCmdUpdateBuffer(cmd, out.buffer, out.offset + done,
                                       std::min(bytes - done, kMostPerUpdate), pattern.data());
      }
    }
    // All transfer stages: vkCmdFillBuffer is a clear command (see ScanKernels::record).
    context.barrier(cmd, VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                    VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                    VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT);
  }

  // Records one run on n >= 1 elements with `out_elements` outputs; `rows` and
  // `segment_starts` as ScanKernels::record_resubmittable takes them.
  void record_run(VkCommandBuffer cmd, const BufferRange& in, const BufferRange& out,
                  std::uint64_t n, std::uint64_t out_elements, const BufferRange& workspace,
                  Value init, const RowLayout* rows = nullptr,
                  const BufferRange* segment_starts = nullptr) const {
    const Context& context = *state_->context;
    const VkDeviceSize element = size_of(spec_.dtype);
    const VkDeviceSize alignment = context.limits().minStorageBufferOffsetAlignment;
    const VkDeviceSize in_bytes = n * element;
    const VkDeviceSize out_bytes = out_elements * element;
    check_range("out", out, out_bytes, element, "the element size");
    const VkDeviceSize spine_bytes = kernels_.spine_bytes(n);
    check_range("in", in, in_bytes, element, "the element size");
    check_range("workspace", workspace, kSpineOffset + spine_bytes, alignment,
                "the device's minStorageBufferOffsetAlignment");
    if (overlap(in, in_bytes, out, out_bytes)) {
      throw UsageError(
          "in and out overlap: in-place scans are not supported (a fallback re-reads a "
          "predecessor's input, which that predecessor may already have overwritten)");
    }
    const VkDeviceSize workspace_used = kSpineOffset + spine_bytes;
    if (overlap(workspace, workspace_used, in, in_bytes) ||
        overlap(workspace, workspace_used, out, out_bytes)) {
      throw UsageError("the workspace overlaps in or out");
    }
    PushedBuffers buffers;
    if (segment_starts != nullptr) {
      const VkDeviceSize bytes = VkDeviceSize{rows->length} * sizeof(std::uint32_t);
      if (overlap(*segment_starts, bytes, out, out_bytes) ||
          overlap(*segment_starts, bytes, workspace, workspace_used)) {
        throw UsageError("the offsets overlap out or the workspace (both are written)");
      }
      buffers.segment_starts = {segment_starts->buffer, segment_starts->offset, bytes};
    }
    buffers.in = bind_from_aligned(in, in_bytes, alignment, element, buffers.in_shift);
    buffers.out = bind_from_aligned(out, out_bytes, alignment, element, buffers.out_shift);
    buffers.spine = {workspace.buffer, workspace.offset + kSpineOffset, spine_bytes};
    buffers.control = {workspace.buffer, workspace.offset, ScanKernels::control_bytes};
    kernels_.record_resubmittable(cmd, buffers, n, init, rows);
  }

  std::shared_ptr<DeviceState> state_;
  ScanSpec spec_;
  ScanKernels kernels_;
};

}  // namespace internal

Plan::Plan(const DeviceHandles& device, ScanSpec spec, Tuning tuning) {
  reference::check_op(spec.dtype, spec.op);
  if (spec.algorithm == Algorithm::csdl) {
    throw UsageError(
        "csdl needs forward progress between workgroups and is the benchmark's; use csdldf "
        "(the default) or rts");
  }
  impl_ = std::make_unique<internal::PlanImpl>(device, spec, tuning);
}

Plan::~Plan() = default;
Plan::Plan(Plan&&) noexcept = default;
Plan& Plan::operator=(Plan&&) noexcept = default;

VkDeviceSize Plan::workspace_bytes(std::uint64_t max_n) const {
  return impl_->workspace_bytes(max_n);
}

std::uint64_t Plan::max_elements() const {
  return impl_->max_elements();
}

void Plan::record(VkCommandBuffer cmd, const BufferRange& in, const BufferRange& out,
                  std::uint64_t n, const BufferRange& workspace, std::optional<Value> init) const {
  impl_->record(cmd, in, out, n, workspace, checked_init(spec(), init));
}

void Plan::record_rows(VkCommandBuffer cmd, const BufferRange& in, const BufferRange& out,
                       std::uint64_t rows, std::uint64_t row_length, const BufferRange& workspace,
                       std::optional<Value> init) const {
  impl_->record_rows(cmd, in, out, rows, row_length, workspace, checked_init(spec(), init));
}

void Plan::record_segments(VkCommandBuffer cmd, const BufferRange& in, const BufferRange& out,
                           std::uint64_t n, const BufferRange& offsets, std::uint64_t segments,
                           const BufferRange& workspace, std::optional<Value> init) const {
  impl_->record_segments(cmd, in, out, n, offsets, segments, workspace, checked_init(spec(), init));
}

const ScanSpec& Plan::spec() const {
  return impl_->spec();
}

}  // namespace gpuscan::vulkan
