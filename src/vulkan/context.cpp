#include "vulkan/context.hpp"

#include <algorithm>
#include <string>
#include <string_view>
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

bool has_extension(VkPhysicalDevice physical, std::string_view name) {
  std::uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> extensions(count);
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, extensions.data());
  return std::any_of(extensions.begin(), extensions.end(),
                     [name](const VkExtensionProperties& e) { return e.extensionName == name; });
}

// Whether compute pipelines can be given a required subgroup size (with full subgroups).
bool subgroup_size_can_be_required(VkPhysicalDevice physical) {
  VkPhysicalDeviceVulkan13Properties props13{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &props13;
  vkGetPhysicalDeviceProperties2(physical, &props);
  return (props13.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
}

const char* const required_features =
    "vulkanMemoryModel (Vulkan 1.2), synchronization2 and maintenance4 (Vulkan 1.3)";

}  // namespace

DeviceFeatures DeviceFeatures::supported(VkPhysicalDevice physical, const DeviceInfo& info) {
  VkPhysicalDeviceVulkan13Features has13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceVulkan12Features has12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  has12.pNext = &has13;
  VkPhysicalDeviceFeatures2 has{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  has.pNext = &has12;
  vkGetPhysicalDeviceFeatures2(physical, &has);
  if (!has12.vulkanMemoryModel || !has13.synchronization2 || !has13.maintenance4) {
    throw DeviceError(info.name + ": Vulkan device lacks " + required_features);
  }
  DeviceFeatures features;
  features.subgroup_size_control = has13.subgroupSizeControl && has13.computeFullSubgroups &&
                                   subgroup_size_can_be_required(physical);
  features.int64 = has.features.shaderInt64 && has12.shaderSubgroupExtendedTypes;
  features.float64 = has.features.shaderFloat64;
  features.int64_atomics = features.int64 && has12.shaderBufferInt64Atomics;
  features.push_descriptor = has_extension(physical, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  features.buffer_device_address = features.int64 && has12.bufferDeviceAddress;
  features.int16 = has.features.shaderInt16;
  return features;
}

DeviceFeatures DeviceFeatures::enabled(const void* chain, const DeviceInfo& info) {
  const VkPhysicalDeviceFeatures* core = nullptr;
  const VkPhysicalDeviceVulkan12Features* v12 = nullptr;
  const VkPhysicalDeviceVulkan13Features* v13 = nullptr;
  for (auto* s = static_cast<const VkBaseInStructure*>(chain); s != nullptr; s = s->pNext) {
    switch (s->sType) {
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2:
        core = &reinterpret_cast<const VkPhysicalDeviceFeatures2*>(s)->features;
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES:
        v12 = reinterpret_cast<const VkPhysicalDeviceVulkan12Features*>(s);
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES:
        v13 = reinterpret_cast<const VkPhysicalDeviceVulkan13Features*>(s);
        break;
      default:
        break;
    }
  }
  if (v12 == nullptr || v13 == nullptr || !v12->vulkanMemoryModel || !v13->synchronization2 ||
      !v13->maintenance4) {
    throw UsageError("the VkDevice given to gpuscan must be created with " +
                     std::string(required_features) +
                     " enabled in VkPhysicalDeviceVulkan12Features and "
                     "VkPhysicalDeviceVulkan13Features of its pNext chain (see "
                     "gpuscan::vulkan::DeviceRequirements); " +
                     info.name + " was not");
  }
  DeviceFeatures features;
  features.subgroup_size_control = v13->subgroupSizeControl && v13->computeFullSubgroups;
  features.int64 = core != nullptr && core->shaderInt64 && v12->shaderSubgroupExtendedTypes;
  features.float64 = core != nullptr && core->shaderFloat64;
  features.int64_atomics = features.int64 && v12->shaderBufferInt64Atomics;
  features.push_descriptor = true;  // required by gpuscan/vulkan.hpp: the caller says so
  features.buffer_device_address = features.int64 && v12->bufferDeviceAddress;
  features.int16 = core != nullptr && core->shaderInt16;
  return features;
}

Context::Context(std::shared_ptr<Instance> instance, const Instance::PhysicalDevice& physical)
    : instance_(std::move(instance)), physical_(physical.handle), info_(physical.info) {
  features_ = DeviceFeatures::supported(physical_, info_);
  read_properties();

  VkPhysicalDeviceVulkan13Features use13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  use13.synchronization2 = VK_TRUE;
  use13.maintenance4 = VK_TRUE;  // workgroup size from a specialization constant (LocalSizeId)
  use13.subgroupSizeControl = features_.subgroup_size_control;
  use13.computeFullSubgroups = features_.subgroup_size_control;
  VkPhysicalDeviceVulkan12Features use12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  use12.pNext = &use13;
  use12.vulkanMemoryModel = VK_TRUE;
  use12.shaderSubgroupExtendedTypes = features_.int64;
  use12.shaderBufferInt64Atomics = features_.int64_atomics;
  use12.bufferDeviceAddress = features_.buffer_device_address;
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR use_statistics{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  use_statistics.pipelineExecutableInfo = VK_TRUE;
  if (pipeline_statistics_) use13.pNext = &use_statistics;
  VkPhysicalDeviceFeatures2 use{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  use.pNext = &use12;
  use.features.shaderInt64 = features_.int64;
  use.features.shaderFloat64 = features_.float64;
  use.features.shaderInt16 = features_.int16;

  const std::uint32_t family = compute_queue_family(physical_);
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = family;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  device_info.pNext = &use;
  std::vector<const char*> extensions;
  if (pipeline_statistics_)
    extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  if (features_.push_descriptor) extensions.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  device_info.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
  device_info.ppEnabledExtensionNames = extensions.data();
  device_info.queueCreateInfoCount = 1;
  device_info.pQueueCreateInfos = &queue_info;
  check(vkCreateDevice(physical_, &device_info, nullptr, &device_), "vkCreateDevice");
  volkLoadDeviceTable(&table_, device_);
  table_.vkGetDeviceQueue(device_, family, 0, &queue_);

  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.queueFamilyIndex = family;
  pool_info.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  check(table_.vkCreateCommandPool(device_, &pool_info, nullptr, &pool_), "vkCreateCommandPool");
}

Context::Context(const ApplicationDevice& device)
    : physical_(device.physical), device_(device.device), owned_(false) {
  if (device.instance == VK_NULL_HANDLE || device.physical == VK_NULL_HANDLE ||
      device.device == VK_NULL_HANDLE) {
    throw UsageError("gpuscan::vulkan: the instance, physical device and device must be given");
  }
  Instance::use_application_instance(device.instance);
  info_ = Instance::describe(physical_).info;
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(physical_, &props);
  if (props.apiVersion < VK_API_VERSION_1_3) {
    throw UsageError(info_.name + " does not support Vulkan 1.3, which gpuscan needs");
  }
  std::uint32_t families = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, nullptr);
  std::vector<VkQueueFamilyProperties> family_properties(families);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, family_properties.data());
  if (device.queue_family >= families ||
      !(family_properties[device.queue_family].queueFlags & VK_QUEUE_COMPUTE_BIT)) {
    throw UsageError("queue family " + std::to_string(device.queue_family) + " of " + info_.name +
                     " cannot run compute work");
  }
  if (!has_extension(physical_, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME)) {
    throw UsageError(info_.name + " lacks " VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME
                                  ", which gpuscan's recorded scans need");
  }
  if (device.enabled_features != nullptr) {
    features_ = DeviceFeatures::enabled(device.enabled_features, info_);
    features_.subgroup_size_control =
        features_.subgroup_size_control && subgroup_size_can_be_required(physical_);
  } else {
    // Without the chain nothing optional may be assumed: 32-bit types only, split tile state.
    features_.push_descriptor = true;
  }
  read_properties();
  pipeline_statistics_ = false;  // the application did not enable the extension for us
  volkLoadDeviceTable(&table_, device_);
  if (table_.vkCmdPushDescriptorSetKHR == nullptr) {
    throw UsageError("the VkDevice given to gpuscan must be created with " +
                     std::string(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) +
                     " enabled (gpuscan::vulkan::DeviceRequirements::extensions)");
  }
}

void Context::read_properties() {
  VkPhysicalDeviceVulkan13Properties props13{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &props13;
  vkGetPhysicalDeviceProperties2(physical_, &props);
  limits_ = props.properties.limits;
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);
  max_workgroup_size_ =
      std::min(limits_.maxComputeWorkGroupSize[0], limits_.maxComputeWorkGroupInvocations);
  if (features_.subgroup_size_control) {
    // A required subgroup size also bounds the workgroup to that many subgroups.
    max_workgroup_size_ =
        std::min(max_workgroup_size_, info_.subgroup_size * props13.maxComputeWorkgroupSubgroups);
  }
  pipeline_statistics_ =
      has_extension(physical_, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
}

Context::~Context() {
  if (!owned_) return;
  table_.vkDestroyCommandPool(device_, pool_, nullptr);
  table_.vkDestroyDevice(device_, nullptr);
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
  if (!owned_) throw std::logic_error("submit on the application's device");
  const std::lock_guard lock(submit_mutex_);
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  check(table_.vkAllocateCommandBuffers(device_, &alloc, &cmd), "vkAllocateCommandBuffers");
  VkFence fence = VK_NULL_HANDLE;
  const auto release = [&] {
    if (fence != VK_NULL_HANDLE) table_.vkDestroyFence(device_, fence, nullptr);
    table_.vkFreeCommandBuffers(device_, pool_, 1, &cmd);
  };
  try {
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(table_.vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
    // What earlier submissions wrote is visible to everything this one does.
    barrier(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_MEMORY_WRITE_BIT,
            VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
            VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT);
    record(cmd);
    check(table_.vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
    VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(table_.vkCreateFence(device_, &fence_info, nullptr, &fence), "vkCreateFence");
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    check(table_.vkQueueSubmit(queue_, 1, &submit, fence), "vkQueueSubmit");
    const VkResult waited = table_.vkWaitForFences(device_, 1, &fence, VK_TRUE, submit_timeout_ns);
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

void Context::barrier(VkCommandBuffer cmd, VkPipelineStageFlags2 src_stage,
                      VkAccessFlags2 src_access, VkPipelineStageFlags2 dst_stage,
                      VkAccessFlags2 dst_access) const {
  VkMemoryBarrier2 barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
  barrier.srcStageMask = src_stage;
  barrier.srcAccessMask = src_access;
  barrier.dstStageMask = dst_stage;
  barrier.dstAccessMask = dst_access;
  VkDependencyInfo dependency{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
  dependency.memoryBarrierCount = 1;
  dependency.pMemoryBarriers = &barrier;
  table_.vkCmdPipelineBarrier2(cmd, &dependency);
}

}  // namespace gpuscan::vulkan
