// Thread -> warp -> block: the local scan of one tile, and its reduction.
//
// The owner of a tile and a fallback that reduces the same tile both call
// tile_local_scan, so they combine the same elements in the same order and get the same
// bits: the split tile-state words of two posts of one tile can then never mix two values.
#pragma once

#include <type_traits>

#include "cuda/kernels/block_scan.cuh"
#include "cuda/kernels/tile_io.cuh"
#include "cuda/launch.hpp"
#include "gpuscan/types.hpp"

namespace gpuscan::cuda {

// The scan's init value: from the launch's arguments, or read from device memory.
template <class T>
__device__ __forceinline__ T init_value(const ScanArgs& scan) {
  return scan.init ? *static_cast<const T*>(scan.init) : from_bits<T>(scan.init_bits);
}

// Thread level: sequential inclusive scan of one vector.
template <class M>
__device__ __forceinline__ void thread_scan(Vector<typename M::T>& v) {
#pragma unroll
  for (int e = 1; e < Vector<typename M::T>::size; ++e) v.x[e] = M::combine(v.x[e - 1], v.x[e]);
}

template <class M>
__device__ __forceinline__ Vector<typename M::T> combine_each(typename M::T prefix,
                                                              Vector<typename M::T> v) {
#pragma unroll
  for (int e = 0; e < Vector<typename M::T>::size; ++e) v.x[e] = M::combine(prefix, v.x[e]);
  return v;
}

// Scans this thread's `loaded` rows of a tile: each warp's block row by row, then the warp
// totals across the team into partials set `set`. With kKeep, `rows` ends up holding the scanned
// elements relative to the warp's block, for store_tile. Returns the tile's reduction (the
// same in every thread).
template <class M, int VPT, bool kKeep, class Team = WholeBlock, int kSets>
__device__ __forceinline__ typename M::T tile_local_scan(
    Vector<typename M::T> (&loaded)[VPT], BlockPartials<typename M::T, kSets>& partials, int set,
    Vector<typename M::T> (&rows)[VPT]) {
  using T = typename M::T;
  T carry = M::identity();  // the warp's block so far, the same in every lane
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    thread_scan<M>(loaded[k]);
    const T inclusive = warp_inclusive_scan<M>(loaded[k].last());
    const T row_prefix = M::combine(carry, warp_shift_up<M>(inclusive));
    carry = M::combine(carry, warp_last(inclusive));
    if constexpr (kKeep) rows[k] = combine_each<M>(row_prefix, loaded[k]);
  }
  block_scan_totals<M, Team>(partials, set, carry);
  return block_total<M, Team>(partials, set);
}

// Loads `tile` from global memory and scans it.
template <class M, int VPT, bool kKeep, class Team = WholeBlock, int kSets>
__device__ __forceinline__ typename M::T load_and_scan(
    const typename M::T* in, std::uint64_t n, std::uint32_t tile,
    BlockPartials<typename M::T, kSets>& partials, int set, Vector<typename M::T> (&rows)[VPT]) {
  Vector<typename M::T> loaded[VPT];
  load_tile<typename M::T, VPT, Team>(in, n, tile, M::identity(), loaded);
  return tile_local_scan<M, VPT, kKeep, Team>(loaded, partials, set, rows);
}

// Loads `tile` and reduces it to the bits its owner's tile_local_scan gets. Integer
// operators are associative and commutative, so any order gives those bits: each thread
// reduces its rows and the warp scans once instead of once per row (fewer registers and
// shuffles). Floats take the owner's order.
template <class M, int VPT, class Team = WholeBlock, int kSets>
__device__ __forceinline__ typename M::T load_and_reduce(
    const typename M::T* in, std::uint64_t n, std::uint32_t tile,
    BlockPartials<typename M::T, kSets>& partials, int set) {
  using T = typename M::T;
  Vector<T> loaded[VPT];
  load_tile<T, VPT, Team>(in, n, tile, M::identity(), loaded);
  if constexpr (std::is_integral_v<T>) {
    T total = M::identity();
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
#pragma unroll
      for (int e = 0; e < Vector<T>::size; ++e) total = M::combine(total, loaded[k].x[e]);
    }
    block_scan_totals<M, Team>(partials, set, warp_last(warp_inclusive_scan<M>(total)));
    return block_total<M, Team>(partials, set);
  } else {
    Vector<T> unused[VPT];
    return tile_local_scan<M, VPT, false, Team>(loaded, partials, set, unused);
  }
}

// Writes the owned tile, whose predecessors reduce to `tile_prefix`: its inclusive or
// exclusive scan, or for a reduction the last tile's running total as the one output.
template <class M, int VPT, class Team = WholeBlock, int kSets>
__device__ __forceinline__ void store_tile(typename M::T* out, std::uint64_t n, std::uint32_t tile,
                                           std::uint32_t tile_count, Kind kind,
                                           typename M::T tile_prefix,
                                           const BlockPartials<typename M::T, kSets>& partials,
                                           int set, const Vector<typename M::T> (&rows)[VPT]) {
  using T = typename M::T;
  if (kind == Kind::reduce) {
    if (tile == tile_count - 1 && threadIdx.x == 0) {
      out[0] = M::combine(tile_prefix, block_total<M, Team>(partials, set));
    }
    return;
  }
  const T prefix = M::combine(tile_prefix, warp_prefix<M>(partials, set));
  T before = M::identity();  // exclusive: the inclusive value of the element before a row
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    const Vector<T>& v = rows[k];
    if (kind == Kind::exclusive) {
      const T previous_lane = __shfl_up_sync(kFullMask, v.last(), 1);
      if (lane_id() != 0) before = previous_lane;
      Vector<T> shifted;
      shifted.x[0] = before;
#pragma unroll
      for (int e = 1; e < Vector<T>::size; ++e) shifted.x[e] = v.x[e - 1];
      store_row<T, VPT, Team>(out, n, tile, k, combine_each<M>(prefix, shifted));
      before = warp_last(v.last());
    } else {
      store_row<T, VPT, Team>(out, n, tile, k, combine_each<M>(prefix, v));
    }
  }
}

}  // namespace gpuscan::cuda
