// An application's own Vulkan device, buffers and command buffer, with a gpuscan scan and a
// batched scan (the same n as 1000 rows) recorded into it once and submitted twice on new
// data. Build: part of the gpuscan build
// (build/bin/gpuscan_example_vulkan_record). Error handling is minimal; a real engine has its
// own.
#include <vulkan/vulkan.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <gpuscan/vulkan.hpp>

#define CHECK(call)                                       \
  do {                                                    \
    if (VkResult r = (call); r != VK_SUCCESS) {           \
      std::fprintf(stderr, "%s failed (%d)\n", #call, r); \
      std::exit(1);                                       \
    }                                                     \
  } while (0)

int main() {
  // The application's instance and device (the first Vulkan 1.3 device).
  VkApplicationInfo app_info{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app_info.apiVersion = VK_API_VERSION_1_3;
  VkInstanceCreateInfo instance_info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  instance_info.pApplicationInfo = &app_info;
  VkInstance instance;
  CHECK(vkCreateInstance(&instance_info, nullptr, &instance));
  std::uint32_t count = 1;
  VkPhysicalDevice physical;
  if (vkEnumeratePhysicalDevices(instance, &count, &physical) < 0 || count == 0) return 1;
  const std::uint32_t family = 0;  // family 0 runs compute on the drivers this was tried on

  // gpuscan says what the device needs; this program has no features of its own to merge.
  gpuscan::vulkan::DeviceRequirements needs(instance, physical);
  const float priority = 1;
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = family;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  device_info.pNext = &needs.features;
  device_info.queueCreateInfoCount = 1;
  device_info.pQueueCreateInfos = &queue_info;
  device_info.enabledExtensionCount = static_cast<std::uint32_t>(needs.extensions.size());
  device_info.ppEnabledExtensionNames = needs.extensions.data();
  VkDevice device;
  CHECK(vkCreateDevice(physical, &device_info, nullptr, &device));
  VkQueue queue;
  vkGetDeviceQueue(device, family, 0, &queue);

  // A plan, and the sizes of its buffers.
  const std::uint64_t n = 1'000'000;
  {
    gpuscan::vulkan::Plan plan({instance, physical, device, family, &needs.features},
                               {gpuscan::DType::u32, gpuscan::Op::add, gpuscan::Kind::inclusive});
    const VkDeviceSize bytes = n * sizeof(std::uint32_t);
    const VkDeviceSize workspace_bytes = plan.workspace_bytes(n);

    // Three host-visible buffers (a real engine would keep the data in device-local memory).
    VkPhysicalDeviceMemoryProperties memory;
    vkGetPhysicalDeviceMemoryProperties(physical, &memory);
    auto make = [&](VkDeviceSize size, VkBuffer& buffer, VkDeviceMemory& storage) -> void* {
      VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
      info.size = size;
      info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
      CHECK(vkCreateBuffer(device, &info, nullptr, &buffer));
      VkMemoryRequirements req;
      vkGetBufferMemoryRequirements(device, buffer, &req);
      VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
      alloc.allocationSize = req.size;
      const VkMemoryPropertyFlags want =
          VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      while (!((req.memoryTypeBits >> alloc.memoryTypeIndex) & 1) ||
             (memory.memoryTypes[alloc.memoryTypeIndex].propertyFlags & want) != want)
        ++alloc.memoryTypeIndex;
      CHECK(vkAllocateMemory(device, &alloc, nullptr, &storage));
      CHECK(vkBindBufferMemory(device, buffer, storage, 0));
      void* mapped;
      CHECK(vkMapMemory(device, storage, 0, VK_WHOLE_SIZE, 0, &mapped));
      return mapped;
    };
    VkBuffer in, out, rows_out, workspace;
    VkDeviceMemory in_memory, out_memory, rows_out_memory, workspace_memory;
    auto* x = static_cast<std::uint32_t*>(make(bytes, in, in_memory));
    auto* y = static_cast<std::uint32_t*>(make(bytes, out, out_memory));
    auto* rows_y = static_cast<std::uint32_t*>(make(bytes, rows_out, rows_out_memory));
    make(workspace_bytes, workspace, workspace_memory);

    // One command buffer: host writes -> scan -> host reads. Recorded once.
    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.queueFamilyIndex = family;
    VkCommandPool pool;
    CHECK(vkCreateCommandPool(device, &pool_info, nullptr, &pool));
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = pool;
    alloc.commandBufferCount = 1;
    VkCommandBuffer cmd;
    CHECK(vkAllocateCommandBuffers(device, &alloc, &cmd));
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CHECK(vkBeginCommandBuffer(cmd, &begin));
    auto barrier = [&](VkPipelineStageFlags2 src, VkAccessFlags2 src_access,
                       VkPipelineStageFlags2 dst, VkAccessFlags2 dst_access) {
      VkMemoryBarrier2 b{
          VK_STRUCTURE_TYPE_MEMORY_BARRIER_2, nullptr, src, src_access, dst, dst_access};
      VkDependencyInfo dependency{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
      dependency.memoryBarrierCount = 1;
      dependency.pMemoryBarriers = &b;
      vkCmdPipelineBarrier2(cmd, &dependency);
    };
    // The barrier contract (gpuscan/vulkan.hpp): input visible to compute reads before ...
    barrier(VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_WRITE_BIT,
            VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_READ_BIT);
    plan.record(cmd, {in, 0, bytes}, {out, 0, bytes}, n, {workspace, 0, workspace_bytes});
    // The same input as 1000 rows, each scanned on its own; the workspace of n serves both
    // (the second run orders itself after the first's use of it).
    const std::uint64_t rows = 1000, row_length = n / rows;
    plan.record_rows(cmd, {in, 0, bytes}, {rows_out, 0, bytes}, rows, row_length,
                     {workspace, 0, workspace_bytes});
    // ... and the output, written by compute shaders, made visible to its reader after.
    barrier(VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
            VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
    CHECK(vkEndCommandBuffer(cmd));

    // Submitted twice on new data: each run resets its part of the workspace itself.
    for (std::uint32_t round = 1; round <= 2; ++round) {
      for (std::uint64_t i = 0; i < n; ++i) x[i] = round;
      VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
      submit.commandBufferCount = 1;
      submit.pCommandBuffers = &cmd;
      CHECK(vkQueueSubmit(queue, 1, &submit, VK_NULL_HANDLE));
      CHECK(vkQueueWaitIdle(queue));
      std::printf("round %u: out[%llu] = %u (expected %llu)\n", round,
                  static_cast<unsigned long long>(n - 1), y[n - 1],
                  static_cast<unsigned long long>(round * n));
      std::printf("round %u: batched, last row's out[%llu] = %u (expected %llu)\n", round,
                  static_cast<unsigned long long>(n - 1), rows_y[n - 1],
                  static_cast<unsigned long long>(round * row_length));
      if (y[n - 1] != round * n || rows_y[n - 1] != round * row_length) return 1;
    }
    vkDestroyCommandPool(device, pool, nullptr);
    for (VkBuffer b : {in, out, rows_out, workspace}) vkDestroyBuffer(device, b, nullptr);
    for (VkDeviceMemory m : {in_memory, out_memory, rows_out_memory, workspace_memory})
      vkFreeMemory(device, m, nullptr);
  }  // the plan goes before the device
  vkDestroyDevice(device, nullptr);
  vkDestroyInstance(instance, nullptr);
  return 0;
}
