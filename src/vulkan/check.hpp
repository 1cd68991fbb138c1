// Turns a failed Vulkan call into a gpuscan::DeviceError that names the call.
#pragma once

#include "vulkan/vk.hpp"

#include <string>

#include "gpuscan/error.hpp"

namespace gpuscan::vulkan {

const char* result_name(VkResult result);

inline void check(VkResult result, const char* what) {
  if (result != VK_SUCCESS) {
    throw DeviceError(std::string("Vulkan: ") + what + " failed (" + result_name(result) + ")");
  }
}

}  // namespace gpuscan::vulkan
