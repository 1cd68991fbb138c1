// Block level: scans the warps' totals across the thread block. Each of the two slots
// (the block's own tile, and a fallback's tile) has room for the largest block.
#pragma once

#include "cuda/kernels/warp_scan.cuh"

namespace gpuscan::cuda {

constexpr int kMaxWarps = 1024 / kWarpSize;
enum Slot { kSlotOwn = 0, kSlotFallback = 1 };

template <class T>
struct BlockPartials {
  T warp_totals[2][kMaxWarps];
};

// Every warp passes its total; afterwards slot `slot` holds the inclusive scan of the
// totals in warp order. Two barriers: all totals are in before warp 0 scans them, and the
// scan is complete before anyone reads it.
template <class M>
__device__ __forceinline__ void block_scan_totals(BlockPartials<typename M::T>& partials, int slot,
                                                  typename M::T warp_total) {
  const int warps = blockDim.x / kWarpSize;
  if (lane_id() == kWarpSize - 1) partials.warp_totals[slot][warp_id()] = warp_total;
  __syncthreads();
  if (warp_id() == 0) {
    const int lane = lane_id();
    typename M::T x = lane < warps ? partials.warp_totals[slot][lane] : M::identity();
    x = warp_inclusive_scan<M>(x);
    if (lane < warps) partials.warp_totals[slot][lane] = x;
  }
  __syncthreads();
}

// What precedes this thread's warp in the block, and the block's total.
template <class M>
__device__ __forceinline__ typename M::T warp_prefix(const BlockPartials<typename M::T>& partials,
                                                     int slot) {
  const int warp = warp_id();
  return warp == 0 ? M::identity() : partials.warp_totals[slot][warp - 1];
}

template <class M>
__device__ __forceinline__ typename M::T block_total(const BlockPartials<typename M::T>& partials,
                                                     int slot) {
  return partials.warp_totals[slot][blockDim.x / kWarpSize - 1];
}

}  // namespace gpuscan::cuda
