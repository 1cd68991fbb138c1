// Scans recorded into the application's own Vulkan command buffers, on its own buffers
// (DESIGN 3a, "On the caller's memory").
//
//   gpuscan::vulkan::DeviceRequirements needs(instance, physical);   // merge into your
//   ... vkCreateDevice with needs.extensions and needs.features chained ...  // VkDeviceCreateInfo
//   gpuscan::vulkan::Plan plan({instance, physical, device, queue_family, &features2},
//                              {gpuscan::DType::u32, gpuscan::Op::add, gpuscan::Kind::inclusive});
//   VkDeviceSize bytes = plan.workspace_bytes(max_n);   // a buffer range of yours
//   plan.record(cmd, {in_buffer, in_offset, in_size}, {out_buffer, 0, out_size}, n,
//               {workspace_buffer, 0, bytes});
//   plan.record_rows(cmd, in, out, rows, row_length, workspace);        // B rows of N
//   plan.record_segments(cmd, in, out, n, {offsets_buffer, 0, (segments + 1) * 4}, segments,
//                        workspace);                                    // CSR segments
//
// What a recorded scan needs of the device: Vulkan 1.3 with vulkanMemoryModel,
// synchronization2 and maintenance4, and VK_KHR_push_descriptor; where the device has them,
// subgroupSizeControl with computeFullSubgroups (pipelines get a fixed subgroup size),
// shaderInt64 with shaderSubgroupExtendedTypes (u64, i64, f64), shaderFloat64 (f64) and
// shaderBufferInt64Atomics (a faster tile state). DeviceRequirements lists them for the
// device; pass the pNext chain your VkDeviceCreateInfo had as `enabled_features`, so that
// gpuscan uses exactly what you enabled (without it, only 32-bit types are offered).
//
// Contract of record(), record_rows() and record_segments():
// - Nothing is allocated and no descriptor set is written: descriptors are pushed into the
//   command buffer (VK_KHR_push_descriptor). A command buffer with recorded scans may be
//   submitted any number of times: each run zeroes the part of the workspace it uses
//   first, so replays stay exact.
// - Barriers. Before the recorded commands, the application makes its writes of `in`
//   available to VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT with VK_ACCESS_2_SHADER_STORAGE_READ_BIT,
//   and finishes its reads of `out` (the scan writes it). After them, `out` has been
//   written by VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT with VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT:
//   a barrier from there to the consumer is the application's. The workspace needs no
//   barrier from the application between scans on one queue: each run orders itself after
//   earlier work on it in submission order. Runs that share a workspace must not execute
//   at the same time (different queues without a semaphore between them); give each
//   concurrent scan its own workspace.
// - Buffers: `in`, `out` and the workspace are created with VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
//   the workspace also with VK_BUFFER_USAGE_TRANSFER_DST_BIT (it is filled with zeros), and
//   `out` too for Kind::reduce of an empty input, rows or segments (init is written with
//   vkCmdFillBuffer or vkCmdUpdateBuffer, followed by a barrier to the compute stage); a
//   segmented scan's offsets with VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, at an offset that is a
//   multiple of minStorageBufferOffsetAlignment. The offsets of in and out may be any
//   multiple of the element size (data that does not start at the device's binding
//   alignment is moved element by element, slower); the workspace's offset is a multiple
//   of the device's minStorageBufferOffsetAlignment. In and out must not overlap
//   (in place is refused: a fallback re-reads a predecessor's input, which the predecessor
//   may already have overwritten), nor overlap the workspace.
// - Threads: a Plan is immutable; any number of threads may record through one Plan at
//   once (into command buffers from pools they synchronise as Vulkan requires). Plans of
//   one device share their pipelines; destroy every Plan before the VkDevice.
// - gpuscan calls Vulkan through the loader it opens itself (libvulkan.so.1), with its own
//   per-device function table and none of the vk* symbols exported, so it coexists with
//   the application's loader or volk.
// - Failures throw gpuscan::UsageError (a bad request, named in the message) or
//   gpuscan::DeviceError.
#pragma once

#include <vulkan/vulkan_core.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "gpuscan/scanner.hpp"
#include "gpuscan/types.hpp"

namespace gpuscan::vulkan {

// The extensions and features a recorded scan uses on `physical`, ready to be merged into
// (or, if the application has none of its own, used as) its VkDeviceCreateInfo:
// `features.pNext` chains `vulkan12`, whose pNext chains `vulkan13`. Not copyable or
// movable, since the chain points into the object.
struct DeviceRequirements {
  DeviceRequirements(VkInstance instance, VkPhysicalDevice physical);
  DeviceRequirements(const DeviceRequirements&) = delete;
  DeviceRequirements& operator=(const DeviceRequirements&) = delete;

  std::vector<const char*> extensions;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan12Features vulkan12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan13Features vulkan13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
};

// The application's device.
struct DeviceHandles {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  std::uint32_t queue_family = 0;  // the family of the queues the scans are submitted to
  // The pNext chain of the VkDeviceCreateInfo the device was created with (for example
  // &requirements.features), or nullptr.
  const void* enabled_features = nullptr;
};

// A range of one of the application's buffers.
struct BufferRange {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
};

namespace internal {
class PlanImpl;
}

class Plan {
 public:
  // spec.algorithm must be csdldf (the default) or rts; csdl needs forward progress.
  Plan(const DeviceHandles& device, ScanSpec spec, Tuning tuning = {});
  ~Plan();
  Plan(Plan&&) noexcept;
  Plan& operator=(Plan&&) noexcept;

  // Bytes of workspace that scans of up to max_n elements need.
  VkDeviceSize workspace_bytes(std::uint64_t max_n) const;
  // The most elements one recorded scan takes on this device (the storage-buffer range and
  // 32-bit element indices bound it). A batched or segmented scan takes at most the least of
  // this and 2^31 - 1 (the shaders' row arithmetic).
  std::uint64_t max_elements() const;

  // Records out = scan(in) of n elements into `cmd` (see the contract above). init: a value
  // of the spec's dtype (default: the operator's identity). For Kind::reduce, `out` receives
  // one element.
  void record(VkCommandBuffer cmd, const BufferRange& in, const BufferRange& out, std::uint64_t n,
              const BufferRange& workspace, std::optional<Value> init = {}) const;

  // A batched scan (DESIGN 3f) of `rows` rows of `row_length` elements, row-major, each row
  // scanned on its own in one pass; init applies at each row's start. For Kind::reduce,
  // `out` receives one element per row. workspace_bytes(rows * row_length) suffices. Needs
  // csdldf (rts is refused).
  void record_rows(VkCommandBuffer cmd, const BufferRange& in, const BufferRange& out,
                   std::uint64_t rows, std::uint64_t row_length, const BufferRange& workspace,
                   std::optional<Value> init = {}) const;

  // A segmented scan (DESIGN 3f) of n elements whose segments are given CSR-style by
  // `offsets`: a range of the application's buffer holding segments + 1 uint32 values, where
  // segment s is elements [offsets[s], offsets[s + 1]), each scanned on its own from init.
  // For Kind::reduce, `out` receives one element per segment (init for an empty one).
  // workspace_bytes(n) suffices. Needs csdldf (rts is refused).
  // Precondition, which the host cannot check (the values live on the device): offsets[0]
  // is 0, the values do not decrease, and offsets[segments] is n. Offsets that break it give
  // unspecified output values, but nothing outside in, out, the offsets and the workspace is
  // read or written, and the run ends. For n == 0 the offsets are not read.
  void record_segments(VkCommandBuffer cmd, const BufferRange& in, const BufferRange& out,
                       std::uint64_t n, const BufferRange& offsets, std::uint64_t segments,
                       const BufferRange& workspace, std::optional<Value> init = {}) const;

  const ScanSpec& spec() const;

 private:
  std::unique_ptr<internal::PlanImpl> impl_;
};

}  // namespace gpuscan::vulkan
