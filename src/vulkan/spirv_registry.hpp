// The SPIR-V of every kernel variant, compiled at build time and embedded in the library.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace gpuscan::vulkan {

// `name` is "<kernel>.<dtype>", e.g. "chained_scan.u32"; empty if there is none.
std::span<const std::uint32_t> find_spirv(std::string_view name);

}  // namespace gpuscan::vulkan
