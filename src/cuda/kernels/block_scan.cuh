// Block level: scans the warps' totals across a team (team.cuh). BlockPartials holds
// kSets of them, each with room for the largest block: the reduce-then-scan kernels use
// one, the chained scan one per tile it still has to store and one for fallbacks.
#pragma once

#include "cuda/kernels/team.cuh"

namespace gpuscan::cuda {

constexpr int kMaxWarps = 1024 / kWarpSize;

template <class T, int kSets = 1>
struct BlockPartials {
  T warp_totals[kSets][kMaxWarps];
};

// Every warp of the team passes its total; afterwards set `set` holds the inclusive scan of
// the totals in warp order. Two barriers: all totals are in before warp 0 scans them, and
// the scan is complete before anyone reads it.
template <class M, class Team, int kSets>
__device__ __forceinline__ void block_scan_totals(BlockPartials<typename M::T, kSets>& partials,
                                                  int set, typename M::T warp_total) {
  const int warps = Team::threads() / kWarpSize;
  if (lane_id() == kWarpSize - 1) partials.warp_totals[set][warp_id()] = warp_total;
  Team::sync();
  if (warp_id() == 0) {
    const int lane = lane_id();
    typename M::T x = lane < warps ? partials.warp_totals[set][lane] : M::identity();
    x = warp_inclusive_scan<M>(x);
    if (lane < warps) partials.warp_totals[set][lane] = x;
  }
  Team::sync();
}

// What precedes this thread's warp in the team, and the team's total.
template <class M, int kSets>
__device__ __forceinline__ typename M::T warp_prefix(
    const BlockPartials<typename M::T, kSets>& partials, int set) {
  const int warp = warp_id();
  return warp == 0 ? M::identity() : partials.warp_totals[set][warp - 1];
}

template <class M, class Team, int kSets>
__device__ __forceinline__ typename M::T block_total(
    const BlockPartials<typename M::T, kSets>& partials, int set) {
  return partials.warp_totals[set][Team::threads() / kWarpSize - 1];
}

}  // namespace gpuscan::cuda
