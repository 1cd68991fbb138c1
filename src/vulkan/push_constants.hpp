// The host's view of the shaders' push constants (fields in shaders/common/interface.h).
#pragma once

#include <cstdint>

#include "shaders/common/interface.h"

namespace gpuscan::vulkan {

struct PushConstants {
  GS_PUSH_CONSTANT_FIELDS
};

}  // namespace gpuscan::vulkan
