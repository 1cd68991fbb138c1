// The Vulkan instance (one per process) and the physical devices it sees.
#pragma once

#include "vulkan/vk.hpp"

#include <cstdint>
#include <memory>
#include <vector>

#include "gpuscan/device.hpp"

namespace gpuscan::vulkan {

// Validation layers are enabled when GPUSCAN_VALIDATION=1 (the tests set it); every
// message they send goes to stderr and is counted.
class Instance {
 public:
  static std::shared_ptr<Instance> get();
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const { return instance_; }
  bool validation_enabled() const { return messenger_ != VK_NULL_HANDLE; }

  struct PhysicalDevice {
    VkPhysicalDevice handle;
    DeviceInfo info;
  };
  // Usable devices (Vulkan 1.3 with the features the kernels need), best first.
  std::vector<PhysicalDevice> devices() const;
  // What gpuscan records of a physical device.
  static PhysicalDevice describe(VkPhysicalDevice handle);

  // For a device the application made (gpuscan/vulkan.hpp): opens the loader and loads
  // the instance-level commands from the application's instance if gpuscan has none.
  static void use_application_instance(VkInstance instance);

 private:
  Instance();
  static void open_loader();
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
};

// Number of validation messages since the process started.
std::uint64_t validation_message_count();

}  // namespace gpuscan::vulkan
