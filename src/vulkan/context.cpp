#include "vulkan/context.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "vulkan/check.hpp"

namespace gpuscan::vulkan {
namespace {

// A submission that has not finished by then is a hang (a decoupled look-back waiting
// for a workgroup that never runs), not a slow run.
constexpr std::uint64_t submit_timeout_ns = 300'000'000'000ull;

std::uint32_t compute_queue_family(VkPhysicalDevice physical) {
  std::uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, families.data());
  for (std::uint32_t i = 0; i < count; ++i) {
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && families[i].timestampValidBits > 0)
      return i;
  }
  throw DeviceError("Vulkan device has no compute queue with timestamps");
}

}  // namespace

Context::Context(std::shared_ptr<Instance> instance, const Instance::PhysicalDevice& physical)
    : instance_(std::move(instance)), physical_(physical.handle), info_(physical.info) {
  VkPhysicalDeviceVulkan13Features has13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceVulkan12Features has12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  has12.pNext = &has13;
  VkPhysicalDeviceFeatures2 has{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  has.pNext = &has12;
  vkGetPhysicalDeviceFeatures2(physical_, &has);

  VkPhysicalDeviceVulkan13Properties props13{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &props13;
  vkGetPhysicalDeviceProperties2(physical_, &props);
  limits_ = props.properties.limits;
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);

  if (!has12.vulkanMemoryModel || !has13.synchronization2 || !has13.maintenance4) {
    throw DeviceError(info_.name +
                      ": Vulkan device lacks vulkanMemoryModel, synchronization2 or maintenance4");
  }
  require_subgroup_size_ = has13.subgroupSizeControl && has13.computeFullSubgroups &&
                           (props13.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT);
  int64_ = has.features.shaderInt64 && has12.shaderSubgroupExtendedTypes;
  max_workgroup_size_ =
      std::min(limits_.maxComputeWorkGroupSize[0], limits_.maxComputeWorkGroupInvocations);
  if (require_subgroup_size_) {
    // A required subgroup size also bounds the workgroup to that many subgroups.
    max_workgroup_size_ =
        std::min(max_workgroup_size_, info_.subgroup_size * props13.maxComputeWorkgroupSubgroups);
  }
  std::uint32_t extension_count = 0;
  vkEnumerateDeviceExtensionProperties(physical_, nullptr, &extension_count, nullptr);
  std::vector<VkExtensionProperties> extensions(extension_count);
  vkEnumerateDeviceExtensionProperties(physical_, nullptr, &extension_count, extensions.data());
  for (const auto& e : extensions) {
    if (std::string_view(e.extensionName) == VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME) {
      pipeline_statistics_ = true;
    }
  }
  float64_ = has.features.shaderFloat64;
  int64_atomics_ = int64_ && has12.shaderBufferInt64Atomics;

  VkPhysicalDeviceVulkan13Features use13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  use13.synchronization2 = VK_TRUE;
  use13.maintenance4 = VK_TRUE;  // workgroup size from a specialization constant (LocalSizeId)
  use13.subgroupSizeControl = require_subgroup_size_;
  use13.computeFullSubgroups = require_subgroup_size_;
  VkPhysicalDeviceVulkan12Features use12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  use12.pNext = &use13;
  use12.vulkanMemoryModel = VK_TRUE;
  use12.shaderSubgroupExtendedTypes = has12.shaderSubgroupExtendedTypes;
  use12.shaderBufferInt64Atomics = has12.shaderBufferInt64Atomics;
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR use_statistics{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  use_statistics.pipelineExecutableInfo = VK_TRUE;
  if (pipeline_statistics_) use13.pNext = &use_statistics;
  VkPhysicalDeviceFeatures2 use{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  use.pNext = &use12;
  use.features.shaderInt64 = has.features.shaderInt64;
  use.features.shaderFloat64 = has.features.shaderFloat64;

  const std::uint32_t family = compute_queue_family(physical_);
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = family;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  device_info.pNext = &use;
  const char* statistics_extension = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
  if (pipeline_statistics_) {
    device_info.enabledExtensionCount = 1;
    device_info.ppEnabledExtensionNames = &statistics_extension;
  }
  device_info.queueCreateInfoCount = 1;
  device_info.pQueueCreateInfos = &queue_info;
  check(vkCreateDevice(physical_, &device_info, nullptr, &device_), "vkCreateDevice");
  vkGetDeviceQueue(device_, family, 0, &queue_);

  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.queueFamilyIndex = family;
  pool_info.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  check(vkCreateCommandPool(device_, &pool_info, nullptr, &pool_), "vkCreateCommandPool");
}

Context::~Context() {
  vkDestroyCommandPool(device_, pool_, nullptr);
  vkDestroyDevice(device_, nullptr);
}

int Context::memory_type(std::uint32_t type_bits, VkMemoryPropertyFlags flags) const {
  for (std::uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
    if ((type_bits & (1u << i)) && (memory_.memoryTypes[i].propertyFlags & flags) == flags) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

void Context::submit(const std::function<void(VkCommandBuffer)>& record) const {
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  check(vkAllocateCommandBuffers(device_, &alloc, &cmd), "vkAllocateCommandBuffers");
  VkFence fence = VK_NULL_HANDLE;
  const auto release = [&] {
    if (fence != VK_NULL_HANDLE) vkDestroyFence(device_, fence, nullptr);
    vkFreeCommandBuffers(device_, pool_, 1, &cmd);
  };
  try {
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
    // What earlier submissions wrote is visible to everything this one does.
    memory_barrier(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_MEMORY_WRITE_BIT,
                   VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                   VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT);
    record(cmd);
    check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
    VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(vkCreateFence(device_, &fence_info, nullptr, &fence), "vkCreateFence");
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    check(vkQueueSubmit(queue_, 1, &submit, fence), "vkQueueSubmit");
    const VkResult waited = vkWaitForFences(device_, 1, &fence, VK_TRUE, submit_timeout_ns);
    if (waited == VK_TIMEOUT) {
      throw DeviceError(info_.name + ": the device did not finish within 300 s (a hang?)");
    }
    check(waited, "vkWaitForFences");
  } catch (...) {
    release();
    throw;
  }
  release();
}

void memory_barrier(VkCommandBuffer cmd, VkPipelineStageFlags2 src_stage, VkAccessFlags2 src_access,
                    VkPipelineStageFlags2 dst_stage, VkAccessFlags2 dst_access) {
  VkMemoryBarrier2 barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
  barrier.srcStageMask = src_stage;
  barrier.srcAccessMask = src_access;
  barrier.dstStageMask = dst_stage;
  barrier.dstAccessMask = dst_access;
  VkDependencyInfo dependency{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
  dependency.memoryBarrierCount = 1;
  dependency.pMemoryBarriers = &barrier;
  vkCmdPipelineBarrier2(cmd, &dependency);
}

}  // namespace gpuscan::vulkan
