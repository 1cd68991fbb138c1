// Device level, the whole block: a look-back in which every warp of the block reads one
// window of predecessors, so that one round trip sees blockDim / 32 windows instead of the
// look-back warp's few. For launches whose blocks are all resident at once: their tiles
// post at about the same time, and a walk window by window then reaches an INCLUSIVE tile
// only one round trip per window (docs/performance.md, C35 and C38).
#pragma once

#include "cuda/kernels/block_scan.cuh"
#include "cuda/kernels/look_back.cuh"

namespace gpuscan::cuda {

// What each warp saw in its window, for all warps to combine in window order. Two sets:
// a step writes one while slower warps may still read the previous step's.
template <class T>
struct BlockWindows {
  std::uint32_t reach[2][kMaxWarps];  // slots taken, newest first; | kEnds: the walk ends there
  T value[2][kMaxWarps];              // those slots combined, the oldest on the left
};
constexpr std::uint32_t kEnds = 0x100;

// Whether a block of `warps` warps reads every predecessor of every tile in one step.
template <class M, class S>
__host__ __device__ constexpr bool block_step_covers(std::uint32_t tile_count,
                                                     std::uint32_t warps) {
  return tile_count <= warps * Spine<M, S>::kWindow;
}

// Reads all windows before `tile` at once, warp w window w, until an INCLUSIVE tile after
// only READY ones completes the prefix (true), or the newest tile not yet taken stays
// NOT_READY for `patience(that tile)` steps (false: `cursor` is then that tile, for a
// fallback, and `prefix` what follows it). Every thread of the block calls it, with the
// same arguments, and gets the same result. `tile` > 0, and its predecessors fit in the
// block's windows (block_step_covers).
template <class M, class S, class Patience>
__device__ bool block_look_back(const Spine<M, S>& spine, BlockWindows<typename M::T>& windows,
                                std::uint32_t tile, std::uint32_t& cursor, typename M::T& prefix,
                                Patience patience, LookbackCounts& counts) {
  using T = typename M::T;
  using Sp = Spine<M, S>;
  const int warps = static_cast<int>(blockDim.x / kWarpSize);
  std::uint32_t taken = 0, spins = 0;
  for (int set = 0;; set ^= 1) {
    ++counts.steps;
    // Windows past tile 0 read NOT_READY without a load.
    const typename S::Word word = spine.read_window(tile - 1, warp_id());
    const std::uint32_t state = Sp::tile_state(word);
    const int not_ready = Sp::first_slot_in(state, GS_STATE_NOT_READY);
    const int inclusive = Sp::first_slot_in(state, GS_STATE_INCLUSIVE);
    const bool ends = inclusive < not_ready;
    const int end = ends ? inclusive + 1 : not_ready;
    const T value = Sp::reduce_window(Sp::tile_value(word), 0, end);
    if (lane_id() == 0) {
      windows.reach[set][warp_id()] = static_cast<std::uint32_t>(end) | (ends ? kEnds : 0);
      windows.value[set][warp_id()] = value;
    }
    __syncthreads();
    // The windows newest first, on while each one is READY throughout.
    T sum = M::identity();
    std::uint32_t reached = 0;
    for (int w = 0; w < warps; ++w) {
      const std::uint32_t reach = windows.reach[set][w];
      sum = M::combine(windows.value[set][w], sum);
      if (reach & kEnds) {
        prefix = sum;
        return true;
      }
      reached += reach;
      if (reach != Sp::kWindow) break;
    }
    // A split tile can read NOT_READY again while its words move on to INCLUSIVE, so
    // `reached` may fall back: the cursor follows this step's reading.
    if (reached > taken) {
      taken = reached;
      spins = 0;
    } else {
      ++counts.spins;
      if (++spins >= patience(tile - 1 - reached)) {
        cursor = tile - 1 - reached;
        prefix = sum;
        return false;
      }
    }
  }
}

}  // namespace gpuscan::cuda
