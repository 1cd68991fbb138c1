// A logical device with one compute queue: what every other Vulkan piece is built on.
#pragma once

#include <volk.h>

#include <cstdint>
#include <functional>
#include <memory>

#include "gpuscan/device.hpp"
#include "vulkan/instance.hpp"

namespace gpuscan::vulkan {

class Context {
 public:
  Context(std::shared_ptr<Instance> instance, const Instance::PhysicalDevice& physical);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  VkDevice device() const { return device_; }
  VkPhysicalDevice physical() const { return physical_; }
  const DeviceInfo& info() const { return info_; }
  const VkPhysicalDeviceLimits& limits() const { return limits_; }

  // Subgroup size of compute pipelines, and whether it can be required (with full
  // subgroups) so that every pipeline is guaranteed to get it.
  std::uint32_t subgroup_size() const { return info_.subgroup_size; }
  bool can_require_subgroup_size() const { return require_subgroup_size_; }
  // The largest workgroup, in threads, that pipelines on this device may use.
  std::uint32_t max_workgroup_size() const { return max_workgroup_size_; }
  bool has_int64() const { return int64_; }
  bool has_float64() const { return float64_; }
  bool has_int64_atomics() const { return int64_atomics_; }
  // Whether the driver reports compiler statistics of pipelines (registers, ...).
  bool has_pipeline_statistics() const { return pipeline_statistics_; }

  // Index of a memory type with all of `flags` among `type_bits`, or -1.
  int memory_type(std::uint32_t type_bits, VkMemoryPropertyFlags flags) const;

  // Records commands with `record`, submits them and waits until they are done.
  void submit(const std::function<void(VkCommandBuffer)>& record) const;

 private:
  std::shared_ptr<Instance> instance_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  DeviceInfo info_;
  VkPhysicalDeviceLimits limits_{};
  VkPhysicalDeviceMemoryProperties memory_{};
  bool require_subgroup_size_ = false;
  bool int64_ = false;
  bool float64_ = false;
  bool int64_atomics_ = false;
  bool pipeline_statistics_ = false;
  std::uint32_t max_workgroup_size_ = 0;
};

// A memory barrier between two stages (all buffers), using synchronization2.
void memory_barrier(VkCommandBuffer cmd, VkPipelineStageFlags2 src_stage, VkAccessFlags2 src_access,
                    VkPipelineStageFlags2 dst_stage, VkAccessFlags2 dst_access);

}  // namespace gpuscan::vulkan
