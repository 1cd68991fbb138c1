#include "vulkan/buffer.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "vulkan/check.hpp"

namespace gpuscan::vulkan {
namespace {
constexpr std::size_t staging_bytes = std::size_t{64} << 20;
}

VulkanBuffer::VulkanBuffer(std::shared_ptr<const Context> context, std::size_t bytes, Memory memory)
    : context_(std::move(context)),
      size_(bytes),
      allocated_(std::max<std::size_t>(32, (bytes + 31) & ~std::size_t{31})) {
  VkDevice device = context_->device();
  // Device buffers get a device address where the device has them, so that compaction can
  // write outputs larger than one binding (docs/protocol.md, "Compaction in chunks").
  const bool addressed = memory == Memory::device && context_->has_buffer_device_address();
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = allocated_;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  if (addressed) info.usage |= VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(context_->vk().vkCreateBuffer(device, &info, nullptr, &buffer_), "vkCreateBuffer");

  VkMemoryRequirements requirements;
  context_->vk().vkGetBufferMemoryRequirements(device, buffer_, &requirements);
  int type = -1;
  if (memory == Memory::device) {
    type = context_->memory_type(requirements.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  } else {
    // Cached host memory makes read-back fast; any host-visible coherent memory will do.
    type = context_->memory_type(requirements.memoryTypeBits,
                                 VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
                                     VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    if (type < 0) {
      type = context_->memory_type(
          requirements.memoryTypeBits,
          VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    }
  }
  if (type < 0) {
    context_->vk().vkDestroyBuffer(device, buffer_, nullptr);
    throw DeviceError(context_->info().name + ": no suitable memory type for a buffer");
  }
  VkMemoryAllocateFlagsInfo address_flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  address_flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  if (addressed) alloc.pNext = &address_flags;
  alloc.allocationSize = requirements.size;
  alloc.memoryTypeIndex = static_cast<std::uint32_t>(type);
  const VkResult allocated = context_->vk().vkAllocateMemory(device, &alloc, nullptr, &memory_);
  if (allocated != VK_SUCCESS) {
    context_->vk().vkDestroyBuffer(device, buffer_, nullptr);
    throw DeviceError(context_->info().name + ": cannot allocate " + std::to_string(allocated_) +
                      " bytes of device memory (" + result_name(allocated) + ")");
  }
  check(context_->vk().vkBindBufferMemory(device, buffer_, memory_, 0), "vkBindBufferMemory");
  if (addressed) {
    VkBufferDeviceAddressInfo address{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    address.buffer = buffer_;
    device_address_ = context_->vk().vkGetBufferDeviceAddress(device, &address);
  }
  if (memory == Memory::staging) {
    void* pointer = nullptr;
    check(context_->vk().vkMapMemory(device, memory_, 0, VK_WHOLE_SIZE, 0, &pointer),
          "vkMapMemory");
    mapped_ = static_cast<std::byte*>(pointer);
  }
}

VulkanBuffer::~VulkanBuffer() {
  context_->vk().vkDestroyBuffer(context_->device(), buffer_, nullptr);
  context_->vk().vkFreeMemory(context_->device(), memory_, nullptr);
}

namespace {

// Moves `total` bytes in staging-sized pieces; `each(staging, offset, bytes)` does one.
template <class F>
void in_pieces(const std::shared_ptr<const Context>& context, std::size_t total, F each) {
  if (total == 0) return;
  VulkanBuffer staging(context, std::min(total, staging_bytes), VulkanBuffer::Memory::staging);
  for (std::size_t offset = 0; offset < total; offset += staging_bytes) {
    each(staging, offset, std::min(staging_bytes, total - offset));
  }
}

}  // namespace

void upload(const std::shared_ptr<const Context>& context, const VulkanBuffer& destination,
            std::span<const std::byte> source) {
  if (source.size() > destination.allocated()) throw UsageError("upload larger than the buffer");
  in_pieces(context, source.size(),
            [&](const VulkanBuffer& staging, std::size_t offset, std::size_t bytes) {
              std::memcpy(staging.mapped(), source.data() + offset, bytes);
              context->submit([&](VkCommandBuffer cmd) {
                const VkBufferCopy region{0, offset, bytes};
                context->vk().vkCmdCopyBuffer(cmd, staging.handle(), destination.handle(), 1,
                                              &region);
              });
            });
}

void download(const std::shared_ptr<const Context>& context, const VulkanBuffer& source,
              std::span<std::byte> destination, std::size_t source_offset) {
  if (source_offset + destination.size() > source.allocated()) {
    throw UsageError("download larger than the buffer");
  }
  in_pieces(context, destination.size(),
            [&](const VulkanBuffer& staging, std::size_t offset, std::size_t bytes) {
              context->submit([&](VkCommandBuffer cmd) {
                const VkBufferCopy region{source_offset + offset, 0, bytes};
                context->vk().vkCmdCopyBuffer(cmd, source.handle(), staging.handle(), 1, &region);
              });
              std::memcpy(destination.data() + offset, staging.mapped(), bytes);
            });
}

}  // namespace gpuscan::vulkan
