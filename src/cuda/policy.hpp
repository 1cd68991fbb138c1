// The CUDA backend's tuning table (core/policy.hpp): tile shapes, the small-input shape and
// threshold, look-back depth and tile order, per architecture and element size. Compaction's
// table: cuda/compaction_policy.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/policy.hpp"
#include "gpuscan/types.hpp"

namespace gpuscan::cuda {

// The row for a device of compute capability `major`.`minor`.
const detail::ScanPolicy& policy_for(int major, int minor, DType dtype);

}  // namespace gpuscan::cuda
