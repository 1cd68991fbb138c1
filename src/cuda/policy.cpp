#include "cuda/policy.hpp"

#include <array>
#include <string>

namespace gpuscan::cuda {
namespace {

using detail::ScanPolicy;

// Shapes are threads x 16-byte vectors a thread; a block per tile (kernels/per_tile_scan.cuh).
constexpr std::array kPolicies{
    ScanPolicy{"sm_90",
               4,
               {256, 8},
               {256, 4},
               std::size_t{8} << 20,
               0,
               true,
               "f32: 32 KB tiles (8 rows) ran faster than 24 KB, whose kernel spills 104 bytes "
               "at 64 registers: H200 0.92-0.94 of memcpy at 2^26..2^28 against 0.89-0.91 with 6 "
               "rows, 0.83-0.85 with 4; H100 0.983-0.994 against 0.973-0.982 (docs/performance.md "
               "C54). Batched scans as for u32",
               {256, 6},
               true},
    ScanPolicy{"sm_90",
               4,
               {256, 6},
               {256, 4},
               std::size_t{8} << 20,
               0,
               true,
               "24 KB tiles: four blocks a multiprocessor at 64 registers, 0.99-1.00 of memcpy "
               "from 2^26 on an H100; under 8 MiB 16 KB tiles put more loads in flight at once, "
               "0.3-0.5 us sooner from 2^13 to 2^18. Batched scans: 6 rows, whose segmented "
               "scan spills 16-40 bytes at 64 registers and still beats 4 rows on every shape "
               "of the table (H100 u32 0.84-0.98 of memcpy against 0.80-0.95, f32 0.81-0.97 "
               "against 0.78-0.94; 80 registers without spills: 0.78-0.97, docs/performance.md "
               "B8)",
               {256, 6}},
    ScanPolicy{"sm_90",
               8,
               {256, 6},
               {256, 4},
               std::size_t{8} << 20,
               0,
               true,
               "six rows for 64-bit types too: a fourth block a multiprocessor outweighs the "
               "smaller tile (H200 u64 0.92-0.93 of memcpy against 0.91-0.92 with 8 rows). "
               "Batched scans: 4 rows, not measured (6 rows spilled for 32-bit types)",
               {256, 4}},
    ScanPolicy{"any",
               4,
               {256, 6},
               {256, 4},
               std::size_t{8} << 20,
               0,
               true,
               "not measured: Hopper's row",
               {256, 6}},
    ScanPolicy{"any",
               8,
               {256, 6},
               {256, 4},
               std::size_t{8} << 20,
               0,
               true,
               "not measured: Hopper's row",
               {256, 4}},
};

}  // namespace

const detail::ScanPolicy& policy_for(int major, int minor, DType dtype) {
  return detail::find_policy(kPolicies, "sm_" + std::to_string(major * 10 + minor), size_of(dtype),
                             is_float(dtype));
}

}  // namespace gpuscan::cuda
