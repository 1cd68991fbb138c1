// Who scans a tile: the whole block (reduce-then-scan), or all warps of the block but the
// last (the chained scan, whose last warp does the look-back meanwhile). The tile's shape,
// its block-level scan and the barriers between them are all taken over a team.
#pragma once

#include <cstdint>

#include "cuda/kernels/warp_scan.cuh"

namespace gpuscan::cuda {

struct WholeBlock {
  __device__ __forceinline__ static std::uint32_t threads() { return blockDim.x; }
  __device__ __forceinline__ static void sync() { __syncthreads(); }
};

// Named barrier 0 is __syncthreads.
constexpr int kTileWarpsBarrier = 1;

struct TileWarps {
  __device__ __forceinline__ static std::uint32_t threads() { return blockDim.x - kWarpSize; }
  __device__ __forceinline__ static void sync() {
    asm volatile("bar.sync %0, %1;" ::"r"(kTileWarpsBarrier), "r"(threads()) : "memory");
  }
};

}  // namespace gpuscan::cuda
