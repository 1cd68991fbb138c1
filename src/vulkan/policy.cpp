#include "vulkan/policy.hpp"

#include <array>

namespace gpuscan::vulkan {
namespace {

using detail::ScanPolicy;

// Shapes are threads x 16-byte vectors a thread. A small shape needs workgroups of 512
// threads; where a device has fewer, its inputs all take the large shape.
constexpr std::array kPolicies{
    ScanPolicy{"gpu",
               4,
               {256, 6},
               {512, 3},
               std::size_t{4} << 20,
               1,
               true,
               "24 KB tiles (64 registers a thread, four workgroups a multiprocessor on an "
               "H200) were the fastest of a shape sweep; under 4 MiB 512 x 3 takes 1-2 us "
               "less; deeper look-back steps measured slower; dispatch order +3%. Batched "
               "scans: 128 x 3, whose segmented scan keeps more workgroups resident (on an "
               "H100 u32 0.60-0.81 of memcpy, f32 0.57-0.74; 128 x 4 0.57-0.79 / 0.44-0.49, "
               "256 x 2 0.61-0.81 / 0.58-0.73, 256 x 6 0.30-0.38 / 0.26-0.33)",
               {128, 3}},
    ScanPolicy{"gpu",
               8,
               {256, 8},
               {512, 3},
               std::size_t{4} << 20,
               1,
               true,
               "32 KB tiles for 64-bit types, the fastest of the same sweep. Batched scans: "
               "256 x 2 (u64 on an H100 0.42-0.46 of memcpy; 128 x 4 and 256 x 4 "
               "0.37-0.42)",
               {256, 2}},
    ScanPolicy{"cpu",
               4,
               {256, 4},
               {},
               0,
               1,
               false,
               "a CPU driver runs workgroups far out of order (tiles from a counter, so that a "
               "look-back never walks through hundreds of unstarted tiles) and caps loops"},
    ScanPolicy{"cpu", 8, {256, 4}, {}, 0, 1, false, "as for 32-bit types"},
};

}  // namespace

const detail::ScanPolicy& policy_for(const DeviceInfo& device, std::size_t element_bytes) {
  return detail::find_policy(kPolicies, device.is_cpu() ? "cpu" : "gpu", element_bytes);
}

}  // namespace gpuscan::vulkan
