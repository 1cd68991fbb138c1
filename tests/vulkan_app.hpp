// The application of the Vulkan interop tests (gpuscan/vulkan.hpp): it links the Vulkan
// loader itself and calls vk* through the loader's own symbols, as an engine would, while
// linking gpuscan statically (whose Vulkan symbols must not clash with them). It makes its
// own instance (with the validation layers when GPUSCAN_VALIDATION=1, counting their
// messages), device, buffers and command buffers, once for the whole test program.
#pragma once

#include <vulkan/vulkan.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpuscan/vulkan.hpp"

namespace gpuscan::testing {
inline std::atomic<int> validation_messages{0};

inline VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                                 VkDebugUtilsMessageTypeFlagsEXT,
                                                 const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                 void*) {
  ++validation_messages;
  std::fprintf(stderr, "application: Vulkan validation: %s\n", data->pMessage);
  return VK_FALSE;
}

inline void vk_check(VkResult result, const char* what) {
  if (result != VK_SUCCESS) throw std::runtime_error(std::string(what) + " failed");
}

// A host-visible buffer of the application's (mapped; correctness, not speed).
struct AppBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  std::byte* mapped = nullptr;
  VkDeviceSize size = 0;
};

// The application: one instance, device and compute queue for the whole test program.
class App {
 public:
  static App& get() {
    static App* app = new App();  // never destroyed: see ~App's absence in the notes below
    return *app;
  }

  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  std::uint32_t family = 0;
  std::string name;
  std::unique_ptr<vulkan::DeviceRequirements> requirements;
  vulkan::DeviceHandles handles;
  VkPhysicalDeviceLimits limits{};
  std::mutex queue_mutex;  // a VkQueue needs external synchronisation

  AppBuffer make_buffer(VkDeviceSize size) {
    AppBuffer b;
    b.size = size;
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = std::max<VkDeviceSize>(size, 16);
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                 VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    vk_check(vkCreateBuffer(device, &info, nullptr, &b.buffer), "vkCreateBuffer");
    VkMemoryRequirements needs;
    vkGetBufferMemoryRequirements(device, b.buffer, &needs);
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = needs.size;
    alloc.memoryTypeIndex = host_visible_type(needs.memoryTypeBits);
    vk_check(vkAllocateMemory(device, &alloc, nullptr, &b.memory), "vkAllocateMemory");
    vk_check(vkBindBufferMemory(device, b.buffer, b.memory, 0), "vkBindBufferMemory");
    void* p = nullptr;
    vk_check(vkMapMemory(device, b.memory, 0, VK_WHOLE_SIZE, 0, &p), "vkMapMemory");
    b.mapped = static_cast<std::byte*>(p);
    return b;
  }
  void free_buffer(AppBuffer& b) {
    vkDestroyBuffer(device, b.buffer, nullptr);
    vkFreeMemory(device, b.memory, nullptr);
    b = {};
  }

  // A command pool of the caller's (command pools are not shared between threads).
  VkCommandPool make_pool() {
    VkCommandPoolCreateInfo info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    info.queueFamilyIndex = family;
    info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    VkCommandPool pool = VK_NULL_HANDLE;
    vk_check(vkCreateCommandPool(device, &info, nullptr, &pool), "vkCreateCommandPool");
    return pool;
  }
  VkCommandBuffer begin(VkCommandPool pool) {
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = pool;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    vk_check(vkAllocateCommandBuffers(device, &alloc, &cmd), "vkAllocateCommandBuffers");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vk_check(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
    // The host wrote the inputs through the mapping: visible to the scans.
    barrier(cmd, VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_WRITE_BIT,
            VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_READ_BIT);
    return cmd;
  }
  void end(VkCommandBuffer cmd) {
    // The application's side of the barrier contract: the scans' outputs to the host.
    barrier(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
            VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
    vk_check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
  }
  void submit_and_wait(VkCommandBuffer cmd) {
    VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence = VK_NULL_HANDLE;
    vk_check(vkCreateFence(device, &fence_info, nullptr, &fence), "vkCreateFence");
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    {
      const std::lock_guard lock(queue_mutex);
      vk_check(vkQueueSubmit(queue, 1, &submit, fence), "vkQueueSubmit");
    }
    vk_check(vkWaitForFences(device, 1, &fence, VK_TRUE, 120'000'000'000ull), "vkWaitForFences");
    vkDestroyFence(device, fence, nullptr);
  }
  static void barrier(VkCommandBuffer cmd, VkPipelineStageFlags2 src_stage,
                      VkAccessFlags2 src_access, VkPipelineStageFlags2 dst_stage,
                      VkAccessFlags2 dst_access) {
    VkMemoryBarrier2 b{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
    b.srcStageMask = src_stage;
    b.srcAccessMask = src_access;
    b.dstStageMask = dst_stage;
    b.dstAccessMask = dst_access;
    VkDependencyInfo dependency{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    dependency.memoryBarrierCount = 1;
    dependency.pMemoryBarriers = &b;
    vkCmdPipelineBarrier2(cmd, &dependency);
  }

 private:
  App() {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "gpuscan_vulkan_interop_tests";
    app.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    info.pApplicationInfo = &app;
    const char* layer = "VK_LAYER_KHRONOS_validation";
    const char* debug = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkDebugUtilsMessengerCreateInfoEXT messenger{
        VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    messenger.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                            VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
    messenger.pfnUserCallback = on_message;
    const char* validate = std::getenv("GPUSCAN_VALIDATION");
    if (validate != nullptr && std::string(validate) == "1") {
      info.enabledLayerCount = 1;
      info.ppEnabledLayerNames = &layer;
      info.enabledExtensionCount = 1;
      info.ppEnabledExtensionNames = &debug;
      info.pNext = &messenger;
    }
    vk_check(vkCreateInstance(&info, nullptr, &instance_), "vkCreateInstance");

    std::uint32_t count = 0;
    vkEnumeratePhysicalDevices(instance_, &count, nullptr);
    std::vector<VkPhysicalDevice> devices(count);
    vkEnumeratePhysicalDevices(instance_, &count, devices.data());
    // A GPU if there is one, else the CPU driver; GPUSCAN_TEST_DEVICE picks by name.
    const char* wanted = std::getenv("GPUSCAN_TEST_DEVICE");
    int best_rank = 99;
    for (VkPhysicalDevice d : devices) {
      VkPhysicalDeviceProperties p;
      vkGetPhysicalDeviceProperties(d, &p);
      if (p.apiVersion < VK_API_VERSION_1_3) continue;
      if (wanted && std::string(p.deviceName).find(wanted) == std::string::npos) continue;
      const int rank = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU     ? 0
                       : p.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? 1
                                                                                : 2;
      if (rank < best_rank) {
        best_rank = rank;
        physical_ = d;
        name = p.deviceName;
        limits = p.limits;
      }
    }
    if (physical_ == VK_NULL_HANDLE) throw std::runtime_error("no Vulkan 1.3 device");
    std::printf("application's Vulkan device: %s\n", name.c_str());

    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &count, nullptr);
    std::vector<VkQueueFamilyProperties> families(count);
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &count, families.data());
    while (family < count && !(families[family].queueFlags & VK_QUEUE_COMPUTE_BIT)) ++family;

    // What gpuscan needs, used as this application's whole device description.
    requirements = std::make_unique<vulkan::DeviceRequirements>(instance_, physical_);
    const float priority = 1;
    VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueFamilyIndex = family;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    device_info.pNext = &requirements->features;
    device_info.queueCreateInfoCount = 1;
    device_info.pQueueCreateInfos = &queue_info;
    device_info.enabledExtensionCount = static_cast<std::uint32_t>(requirements->extensions.size());
    device_info.ppEnabledExtensionNames = requirements->extensions.data();
    vk_check(vkCreateDevice(physical_, &device_info, nullptr, &device), "vkCreateDevice");
    vkGetDeviceQueue(device, family, 0, &queue);
    vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);
    handles = {instance_, physical_, device, family, &requirements->features};
  }
  // (The device and instance live until the process ends: Plans hold gpuscan's pipelines on
  // the device in statics of the test, and the driver may already be gone at exit.)

  std::uint32_t host_visible_type(std::uint32_t bits) const {
    const VkMemoryPropertyFlags want =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    for (std::uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
      if ((bits & (1u << i)) && (memory_.memoryTypes[i].propertyFlags & want) == want) return i;
    }
    throw std::runtime_error("no host-visible memory");
  }

  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory_{};
};

class VulkanRecord : public ::testing::Test {
 protected:
  void SetUp() override { before_ = validation_messages.load(); }
  void TearDown() override {
    EXPECT_EQ(validation_messages.load(), before_) << "Vulkan validation messages";
  }
  App& app = App::get();

 private:
  int before_ = 0;
};

}  // namespace gpuscan::testing
