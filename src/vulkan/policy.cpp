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
               "scans: 256 x 4 (48 registers, five workgroups a multiprocessor, no local "
               "memory once the row loops are unrolled): on an H100 u32 0.76-0.98 of memcpy "
               "on the table's shapes, f32 0.93-0.97 (64 x 128256 aside); 128 x 3 "
               "0.75-0.98 but 0.86-0.87 on 8 x 2^24 (its plain tiles reach 0.89 of memcpy "
               "at 2^28), 256 x 6 and 128 x 6 0.71-0.96, 256 x 3 and 512 x 2 lower. "
               "Compaction: 256 x 4 (43-58 registers, 8 KiB of shared memory): once a tile "
               "stages 16-bit positions, the look-back's 32 tiles a round trip bound small "
               "tiles; on an H100 at 2^28 every operation 1.03-1.27x faster than 256 x 2, "
               "256 x 3 within 3%, 512 x 2 and 1024 x 2 slower but for run-length encoding, "
               "whose two-word tile value takes 256 x 5 (13% faster than 256 x 4 at 2^28). In "
               "place keeps 256 x 2, where it was measured: it stages values, and 256 x 4's "
               "16 KiB of them would hold two workgroups a multiprocessor (48 KiB in all). "
               "Batched runs of 1024 to 2048 row-aligned tiles (two to four rounds of an "
               "H100's 528 resident workgroups) claim them round the rows: there 2-5 points "
               "faster (64 x 128256 0.82-0.83 -> 0.85-0.86 of memcpy), within a point at 336 and "
               "2016 tiles, 1-5 points slower at 672 and from 2688 (docs/performance.md B17)",
               {256, 4},
               false,
               {256, 4},
               {256, 5},
               {256, 2},
               {1024, 2048}},
    ScanPolicy{"gpu",
               8,
               {256, 8},
               {512, 3},
               std::size_t{4} << 20,
               1,
               true,
               "32 KB tiles for 64-bit types, the fastest of the same sweep. Batched scans: "
               "256 x 2 (u64 on an H100 0.42-0.46 of memcpy; 128 x 4 and 256 x 4 "
               "0.37-0.42). Compaction keeps 256 x 8 (256 x 2 and 256 x 4 no faster for "
               "select and unique, rle 256 x 4 6% slower, 256 x 2 37%)",
               {256, 2}},
    ScanPolicy{"cpu",
               4,
               {256, 4},
               {},
               0,
               1,
               false,
               "a CPU driver runs workgroups far out of order (tiles from a counter, so that a "
               "look-back never walks through hundreds of unstarted tiles) and caps loops. "
               "In-place compaction on GPUs' 256 x 2, so that its own shape is tested here",
               {},
               false,
               {},
               {},
               {256, 2}},
    ScanPolicy{"cpu", 8, {256, 4}, {}, 0, 1, false, "as for 32-bit types"},
};

}  // namespace

const detail::ScanPolicy& policy_for(const DeviceInfo& device, std::size_t element_bytes) {
  return detail::find_policy(kPolicies, device.is_cpu() ? "cpu" : "gpu", element_bytes);
}

}  // namespace gpuscan::vulkan
