// The Vulkan backend's tuning table (core/policy.hpp): tile shapes, the small-input shape
// and threshold, look-back depth and tile order, per kind of device and element size.
#pragma once

#include <cstddef>

#include "core/policy.hpp"
#include "gpuscan/device.hpp"

namespace gpuscan::vulkan {

const detail::ScanPolicy& policy_for(const DeviceInfo& device, std::size_t element_bytes);

}  // namespace gpuscan::vulkan
