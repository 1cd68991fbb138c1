// The CUDA backend's tuning table (core/policy.hpp): tile shapes, the small-input shape and
// threshold, look-back depth and tile order, per architecture and element size.
#pragma once

#include <cstddef>

#include "core/policy.hpp"

namespace gpuscan::cuda {

// The row for a device of compute capability `major`.`minor`.
const detail::ScanPolicy& policy_for(int major, int minor, std::size_t element_bytes);

}  // namespace gpuscan::cuda
