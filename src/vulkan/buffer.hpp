// Buffers: device-local storage for the kernels, host-visible staging for transfers.
#pragma once

#include "vulkan/vk.hpp"

#include <cstddef>
#include <memory>
#include <span>

#include "core/backend.hpp"
#include "vulkan/context.hpp"

namespace gpuscan::vulkan {

class VulkanBuffer : public detail::BufferImpl {
 public:
  enum class Memory { device, staging };
  // The allocation is rounded up to 32 bytes so that the vector view of a buffer covers
  // its last partial vector.
  VulkanBuffer(std::shared_ptr<const Context> context, std::size_t bytes,
               Memory memory = Memory::device);
  ~VulkanBuffer() override;
  VulkanBuffer(const VulkanBuffer&) = delete;
  VulkanBuffer& operator=(const VulkanBuffer&) = delete;

  std::size_t size() const override { return size_; }
  std::size_t allocated() const { return allocated_; }
  VkBuffer handle() const { return buffer_; }
  std::byte* mapped() const { return mapped_; }  // staging buffers only
  // The buffer's device address, for shaders that address it through 64-bit pointers
  // (GL_EXT_buffer_reference); 0 where the device lacks bufferDeviceAddress, and for staging
  // buffers.
  VkDeviceAddress device_address() const { return device_address_; }

 private:
  std::shared_ptr<const Context> context_;
  std::size_t size_ = 0;
  std::size_t allocated_ = 0;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  std::byte* mapped_ = nullptr;
  VkDeviceAddress device_address_ = 0;
};

// Copies between host memory and a device buffer through a bounded staging buffer.
void upload(const std::shared_ptr<const Context>& context, const VulkanBuffer& destination,
            std::span<const std::byte> source);
void download(const std::shared_ptr<const Context>& context, const VulkanBuffer& source,
              std::span<std::byte> destination, std::size_t source_offset = 0);

}  // namespace gpuscan::vulkan
