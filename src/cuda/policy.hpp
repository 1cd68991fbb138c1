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

// The compaction kernels' tile (DESIGN 3e) for one operation: threads per block, rows a
// thread and the tile state.
struct CompactionShape {
  std::uint32_t block_size;
  std::uint32_t rows;  // 16-byte vectors a thread: 4 or 8
  bool packed;         // the tile state where the caller leaves the choice (TileState::automatic)
};
CompactionShape compaction_shape(Compaction compaction);

}  // namespace gpuscan::cuda
