#include "vulkan/vulkan_device.hpp"

#include <algorithm>
#include <cctype>
#include <string>

#include "gpuscan/error.hpp"
#include "vulkan/buffer.hpp"
#include "vulkan/vulkan_compactor.hpp"
#include "vulkan/vulkan_scanner.hpp"

namespace gpuscan::vulkan {
namespace {

bool contains_ignoring_case(std::string_view haystack, std::string_view needle) {
  const auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                     [&](char a, char b) { return lower(a) == lower(b); }) != haystack.end();
}

const VulkanBuffer& vulkan_buffer(const detail::BufferImpl& buffer) {
  const auto* vulkan = dynamic_cast<const VulkanBuffer*>(&buffer);
  if (vulkan == nullptr) throw UsageError("buffer belongs to another backend's device");
  return *vulkan;
}

}  // namespace

VulkanDevice::VulkanDevice(std::shared_ptr<Instance> instance,
                           const Instance::PhysicalDevice& physical)
    : context_(std::make_shared<Context>(std::move(instance), physical)),
      pipelines_(std::make_shared<PipelineCache>(context_)) {}

std::shared_ptr<detail::BufferImpl> VulkanDevice::allocate(std::size_t bytes) {
  return std::make_shared<VulkanBuffer>(context_, bytes);
}

void VulkanDevice::upload(detail::BufferImpl& destination, std::span<const std::byte> source) {
  vulkan::upload(context_, vulkan_buffer(destination), source);
}

void VulkanDevice::download(const detail::BufferImpl& source, std::span<std::byte> destination,
                            std::size_t source_offset) {
  vulkan::download(context_, vulkan_buffer(source), destination, source_offset);
}

std::unique_ptr<detail::ScannerImpl> VulkanDevice::make_scanner(const ScanSpec& spec,
                                                                const testing::Options& options) {
  return std::make_unique<VulkanScanner>(context_, pipelines_, spec, options);
}

std::unique_ptr<detail::CompactorImpl> VulkanDevice::make_compactor(
    const CompactSpec& spec, const testing::Options& options) {
  return std::make_unique<VulkanCompactor>(context_, pipelines_, spec, options);
}

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> infos;
  for (const auto& device : Instance::get()->devices()) {
    infos.push_back(device.info);
    infos.back().ordinal = static_cast<int>(infos.size() - 1);
  }
  return infos;
}

std::shared_ptr<detail::DeviceImpl> open_device(std::string_view name) {
  auto instance = Instance::get();
  const auto devices = instance->devices();
  for (const auto& device : devices) {
    if (name.empty() || contains_ignoring_case(device.info.name, name)) {
      return std::make_shared<VulkanDevice>(instance, device);
    }
  }
  std::string known;
  for (const auto& device : devices) known += (known.empty() ? "" : ", ") + device.info.name;
  if (devices.empty()) {
    throw DeviceError(
        "no Vulkan 1.3 device found (for a CPU driver: apt-get install mesa-vulkan-drivers)");
  }
  throw DeviceError("no Vulkan device matches '" + std::string(name) + "' (devices: " + known +
                    ")");
}

}  // namespace gpuscan::vulkan
