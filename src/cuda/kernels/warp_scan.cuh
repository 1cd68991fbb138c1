// Warp level: scans across the 32 lanes of a warp with shuffles. M is a Monoid (monoid.cuh).
#pragma once

namespace gpuscan::cuda {

constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr int kWarpSize = 32;

__device__ __forceinline__ int lane_id() {
  return threadIdx.x & (kWarpSize - 1);
}
__device__ __forceinline__ int warp_id() {
  return threadIdx.x / kWarpSize;
}

// Kogge-Stone inclusive scan; lane l ends with lanes [0, l] combined in order.
template <class M>
__device__ __forceinline__ typename M::T warp_inclusive_scan(typename M::T x) {
  const int lane = lane_id();
#pragma unroll
  for (int d = 1; d < kWarpSize; d <<= 1) {
    const typename M::T y = __shfl_up_sync(kFullMask, x, d);
    if (lane >= d) x = M::combine(y, x);
  }
  return x;
}

// Lane l gets lane l-1's x; lane 0 gets the identity.
template <class M>
__device__ __forceinline__ typename M::T warp_shift_up(typename M::T x) {
  const typename M::T y = __shfl_up_sync(kFullMask, x, 1);
  return lane_id() == 0 ? M::identity() : y;
}

template <class T>
__device__ __forceinline__ T warp_last(T x) {
  return __shfl_sync(kFullMask, x, kWarpSize - 1);
}

}  // namespace gpuscan::cuda
