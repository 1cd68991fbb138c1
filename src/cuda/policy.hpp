// The CUDA backend's tuning table (core/policy.hpp): tile shapes, the small-input shape and
// threshold, look-back depth and tile order, per architecture and element size.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/policy.hpp"
#include "gpuscan/compactor.hpp"

namespace gpuscan::cuda {

// The row for a device of compute capability `major`.`minor`.
const detail::ScanPolicy& policy_for(int major, int minor, DType dtype);

// Threads per block of the compaction kernels (DESIGN 3e) for one operation.
std::uint32_t compaction_block_size(Compaction compaction);
// 16-byte vectors a thread of the compaction kernels for one operation: 4 or 8.
std::uint32_t compaction_rows(Compaction compaction);

}  // namespace gpuscan::cuda
