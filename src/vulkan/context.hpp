// A logical device and its compute queue family: what every other Vulkan piece is built on.
// Either gpuscan's own (Device::open: gpuscan creates the VkDevice, a queue and a command
// pool) or the application's (gpuscan/vulkan.hpp: gpuscan only records into the
// application's command buffers, on the features the application enabled).
#pragma once

#include "vulkan/vk.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "gpuscan/device.hpp"
#include "vulkan/instance.hpp"

namespace gpuscan::vulkan {

// The optional device features gpuscan uses (beyond the required vulkanMemoryModel,
// synchronization2 and maintenance4), as a physical device offers them or as a VkDevice
// was created with them.
struct DeviceFeatures {
  bool subgroup_size_control = false;  // with computeFullSubgroups
  bool int64 = false;                  // shaderInt64 and shaderSubgroupExtendedTypes
  bool float64 = false;
  bool int64_atomics = false;  // shaderBufferInt64Atomics (the packed tile state)
  bool push_descriptor = false;
  // bufferDeviceAddress (Vulkan 1.2): compaction's outputs beyond one storage-buffer binding
  // (docs/protocol.md, "Compaction in chunks").
  bool buffer_device_address = false;
  // shaderInt16: compaction stages positions as 16-bit variables (shaders/common/compaction.glsl).
  bool int16 = false;

  // What `physical` supports (required features missing: a DeviceError).
  static DeviceFeatures supported(VkPhysicalDevice physical, const DeviceInfo& info);
  // What a VkDeviceCreateInfo's pNext chain enables (required features missing: a
  // UsageError).
  static DeviceFeatures enabled(const void* create_info_chain, const DeviceInfo& info);
};

// A device the application created, as gpuscan/vulkan.hpp receives it.
struct ApplicationDevice {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  std::uint32_t queue_family = 0;
  const void* enabled_features = nullptr;  // the pNext chain of its VkDeviceCreateInfo
};

class Context {
 public:
  // gpuscan's own device on `physical`, with every optional feature it supports.
  Context(std::shared_ptr<Instance> instance, const Instance::PhysicalDevice& physical);
  // The application's device; nothing is created and nothing is destroyed with it.
  explicit Context(const ApplicationDevice& device);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  VkDevice device() const { return device_; }
  VkPhysicalDevice physical() const { return physical_; }
  // The device's commands, loaded for this device (no loader trampolines, no globals).
  const VolkDeviceTable& vk() const { return table_; }
  const DeviceInfo& info() const { return info_; }
  const VkPhysicalDeviceLimits& limits() const { return limits_; }
  bool owns_device() const { return owned_; }

  // Subgroup size of compute pipelines, and whether it can be required (with full
  // subgroups) so that every pipeline is guaranteed to get it.
  std::uint32_t subgroup_size() const { return info_.subgroup_size; }
  bool can_require_subgroup_size() const { return features_.subgroup_size_control; }
  // The largest workgroup, in threads, that pipelines on this device may use.
  std::uint32_t max_workgroup_size() const { return max_workgroup_size_; }
  bool has_int64() const { return features_.int64; }
  bool has_float64() const { return features_.float64; }
  bool has_int64_atomics() const { return features_.int64_atomics; }
  bool has_push_descriptor() const { return features_.push_descriptor; }
  // Whether shaders may address buffers through 64-bit device addresses (gpuscan's own
  // buffers are then created with them: VulkanBuffer::device_address).
  bool has_buffer_device_address() const { return features_.buffer_device_address; }
  bool has_int16() const { return features_.int16; }
  // Whether the driver reports compiler statistics of pipelines (registers, ...).
  bool has_pipeline_statistics() const { return pipeline_statistics_; }

  // Index of a memory type with all of `flags` among `type_bits`, or -1.
  int memory_type(std::uint32_t type_bits, VkMemoryPropertyFlags flags) const;

  // Records commands with `record`, submits them and waits until they are done (gpuscan's
  // own device only). Thread-safe: submissions from several threads take turns on the one
  // queue (Vulkan requires external synchronisation of a queue and a command pool).
  void submit(const std::function<void(VkCommandBuffer)>& record) const;

  // A memory barrier between two stages (all buffers), using synchronization2.
  void barrier(VkCommandBuffer cmd, VkPipelineStageFlags2 src_stage, VkAccessFlags2 src_access,
               VkPipelineStageFlags2 dst_stage, VkAccessFlags2 dst_access) const;

 private:
  void read_properties();

  std::shared_ptr<Instance> instance_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VolkDeviceTable table_{};
  bool owned_ = true;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  mutable std::mutex submit_mutex_;  // guards queue_ and pool_
  DeviceInfo info_;
  DeviceFeatures features_;
  VkPhysicalDeviceLimits limits_{};
  VkPhysicalDeviceMemoryProperties memory_{};
  bool pipeline_statistics_ = false;
  std::uint32_t max_workgroup_size_ = 0;
};

}  // namespace gpuscan::vulkan
