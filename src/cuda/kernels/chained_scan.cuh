// Single-pass chained scan. With ChainArgs::fallback it is decoupled fallback (csdldf): a
// look-back that waits too long on a tile reduces that tile itself. Without, it is
// decoupled look-back (csdl), which waits as long as it takes and so needs forward
// progress. The same protocol as shaders/chained_scan.comp (docs/protocol.md).
#pragma once

#include <cuda_pipeline_primitives.h>

#include "cuda/kernels/tile_scan.cuh"
#include "cuda/kernels/tile_state.cuh"
#include "cuda/launch.hpp"

namespace gpuscan::cuda {

// What the look-back warp did; counted by the statistics variant only.
struct LookbackCounts {
  std::uint32_t spins = 0, steps = 0, fallbacks = 0, insertions = 0;
};

// The look-back warp's walk and its fallback insertions.
template <class M, class S, bool kStats>
struct LookBack {
  using T = typename M::T;
  Spine<M, S> spine;
  const ChainArgs& chain;
  LookbackCounts counts;

  // How many steps a look-back of `tile` waits on the not-ready tile `cursor` before it
  // falls back: max_spins for the nearest successor, longer the further back the blocking
  // tile lies (up to 64 times), so that the nearest successor's insertion serves the others.
  __device__ __forceinline__ std::uint32_t patience(std::uint32_t tile,
                                                    std::uint32_t cursor) const {
    return chain.fallback ? chain.max_spins * min(tile - cursor, 64u) : chain.max_spins;
  }

  // Walks back from `cursor`, lookback_depth windows per step (independent reads: one
  // round trip), accumulating into `prefix`, until an INCLUSIVE tile ends the walk (true),
  // or the newest tile not yet taken stays unreadable for patience() steps (false: the
  // caller falls back on `cursor`). csdl then gives up and reports it instead.
  __device__ bool walk(std::uint32_t tile, std::uint32_t& cursor, T& prefix) {
    using Sp = Spine<M, S>;
    std::uint32_t spins = 0;
    for (;;) {
      typename S::Word words[kMaxLookbackDepth];
#pragma unroll
      for (int d = 0; d < kMaxLookbackDepth; ++d) {
        if (d < chain.lookback_depth) words[d] = spine.read_window(cursor, d);
      }
      if constexpr (kStats) ++counts.steps;
      // Take the windows in order while they are all READY; stop at an INCLUSIVE tile
      // (done) or at a tile not ready yet (read again from there).
      bool moved = false;
#pragma unroll
      for (int d = 0; d < kMaxLookbackDepth; ++d) {
        if (d >= chain.lookback_depth) break;
        const std::uint32_t state = Sp::tile_state(words[d]);
        const T value = Sp::tile_value(words[d]);
        const int not_ready = Sp::first_slot_in(state, GS_STATE_NOT_READY);
        const int inclusive = Sp::first_slot_in(state, GS_STATE_INCLUSIVE);
        if (inclusive < not_ready) {
          prefix = M::combine(Sp::reduce_window(value, inclusive + 1), prefix);
          return true;
        }
        // Slots before tile 0 read NOT_READY, and tile 0 is never READY: cursor stays >= 0.
        prefix = M::combine(Sp::reduce_window(value, not_ready), prefix);
        cursor -= not_ready;
        moved = moved || not_ready > 0;
        if (not_ready < Sp::kWindow) break;
      }
      if (moved) {
        spins = 0;
        continue;
      }
      if constexpr (kStats) ++counts.spins;
      if (++spins >= patience(tile, cursor)) {
        if (!chain.fallback && lane_id() == 0) atomicAdd(&chain.control->abandoned, 1u);
        return !chain.fallback;
      }
    }
  }

  // Offers the fallback's `reduction` of `cursor` and continues from what was there.
  // Returns true when the prefix is complete.
  __device__ bool insert(std::uint32_t& cursor, T& prefix, T reduction) {
    using Sp = Spine<M, S>;
    const auto before =
        spine.post(cursor, cursor == 0 ? GS_STATE_INCLUSIVE : GS_STATE_READY, reduction);
    if constexpr (kStats) {
      ++counts.fallbacks;
      const bool was_posted = S::state_of(before) != GS_STATE_NOT_READY;
      if (__ballot_sync(kFullMask, was_posted) == 0) ++counts.insertions;
    }
    const std::uint32_t state = __shfl_sync(kFullMask, Sp::tile_state(before), 0);
    const T value = __shfl_sync(kFullMask, Sp::tile_value(before), 0);
    if (state == GS_STATE_INCLUSIVE) {
      prefix = M::combine(value, prefix);
      return true;
    }
    prefix = M::combine(reduction, prefix);
    if (cursor == 0) return true;
    cursor -= 1;
    return false;
  }

  __device__ void add_counts() const {
    RunControl& control = *chain.control;
    if (counts.spins) atomicAdd(&control.spins, counts.spins);
    if (counts.steps) atomicAdd(&control.lookback_steps, counts.steps);
    if (counts.fallbacks) atomicAdd(&control.fallbacks, counts.fallbacks);
    if (counts.insertions) atomicAdd(&control.insertions, counts.insertions);
  }
};

// Block-wide scratch of the chained scan.
template <class T>
struct ChainedShared {
  BlockPartials<T> partials;
  std::uint32_t tiles[kMaxStagedTiles];  // the tile of each staging buffer
  std::uint32_t lookback;                // the look-back's verdict: done, or the tile to reduce
  T prefix;
};

// The next run's spine and counters start from zero: each block clears its share now, as
// the run after this one cannot start before this one ends.
__device__ __forceinline__ void clear_for_next_run(const ChainArgs& chain) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
       i < chain.next_spine_words; i += stride) {
    chain.next_spine[i] = 0;
  }
  constexpr int control_words = sizeof(RunControl) / sizeof(std::uint32_t);
  if (blockIdx.x == 0 && threadIdx.x < control_words) {
    reinterpret_cast<std::uint32_t*>(chain.next_control)[threadIdx.x] = 0;
  }
}

// The tile a block takes after `tile` (kNoTile: the first): from the counter, not the
// block id, so that every tile before it has been claimed by a block that is running.
// (With dispatch_order, by block id: still safe, as a look-back falls back on a tile whose
// block has not started, and one round trip less.) Thread 0 only.
constexpr std::uint32_t kNoTile = 0xFFFFFFFFu;
__device__ __forceinline__ std::uint32_t claim_tile(const ChainArgs& chain, std::uint32_t tile) {
  if (chain.dispatch_order) return tile == kNoTile ? blockIdx.x : tile + gridDim.x;
  return atomicAdd(&chain.control->tile_counter, 1u);
}

// One tile, given this thread's loaded rows: local scan, post, look-back with fallbacks,
// post the inclusive value, write the output.
template <class M, class S, int VPT, bool kStats>
__device__ __forceinline__ void scan_tile(const ScanArgs& scan, const ChainArgs& chain,
                                          std::uint32_t tile, Vector<typename M::T> (&loaded)[VPT],
                                          ChainedShared<typename M::T>& shared) {
  using T = typename M::T;
  constexpr std::uint32_t kDone = 0xFFFFFFFFu;
  const T* in = static_cast<const T*>(scan.in);
  const T init = from_bits<T>(scan.init_bits);

  Vector<T> rows[VPT];
  T aggregate = tile_local_scan<M, VPT, true>(loaded, shared.partials, kSlotOwn, rows);
  // The init value belongs to tile 0, for its owner and for any fallback on it alike.
  if (tile == 0) aggregate = M::combine(init, aggregate);

  const bool lookback_warp = warp_id() == 0;
  LookBack<M, S, kStats> look{{static_cast<typename S::Storage*>(chain.spine)}, chain, {}};
  std::uint32_t cursor = tile - 1;
  T prefix = M::identity();
  bool done = tile == 0;
  if (lookback_warp) {
    if (tile == 0) {
      look.spine.post(tile, GS_STATE_INCLUSIVE, aggregate);
    } else if (((tile + 1) & chain.blocking_mask) != 0) {  // simulated blocking
      look.spine.post(tile, GS_STATE_READY, aggregate);
    }
  }
  for (;;) {
    if (lookback_warp) {
      if (!done) done = look.walk(tile, cursor, prefix);
      if (lane_id() == 0) shared.lookback = done ? kDone : cursor;
    }
    __syncthreads();
    const std::uint32_t target = shared.lookback;
    if (target == kDone) break;
    Vector<T> unused[VPT];
    T reduction =
        load_and_scan<M, VPT, false>(in, scan.n, target, shared.partials, kSlotFallback, unused);
    if (target == 0) reduction = M::combine(init, reduction);
    if (lookback_warp) done = look.insert(cursor, prefix, reduction);
  }

  if (lookback_warp) {
    if (tile != 0) look.spine.post(tile, GS_STATE_INCLUSIVE, M::combine(prefix, aggregate));
    if constexpr (kStats) {
      if (lane_id() == 0) look.add_counts();
    }
    if (lane_id() == 0) shared.prefix = tile == 0 ? init : prefix;
  }
  __syncthreads();
  store_tile<M, VPT>(static_cast<T*>(scan.out), scan.n, tile, scan.tile_count, scan.kind,
                     shared.prefix, shared.partials, rows);
}

// Persistent blocks: each takes tile after tile, and while it scans, looks back and writes
// one, the input of the next staged_tiles - 1 is already on its way into shared memory
// (cp.async), so the block's loads stay in flight through the look-back instead of waiting
// for it. Tiles from the counter are staged one at a time (staged_tiles 1): a tile claimed
// ahead waits for its block's current one, and csdl's look-backs then wait on that chain
// (measured: 0.21 of memcpy at 2^30 with two). Dynamic shared memory: staged_tiles buffers of
// blockDim * VPT vectors, used as a ring; shared.tiles holds which tile each buffer is for.
template <class M, class S, int VPT, bool kStats>
__global__ void __launch_bounds__(max_block_size(VPT))
    chained_scan(ScanArgs scan, ChainArgs chain) {
  using T = typename M::T;
  extern __shared__ uint4 staging[];
  __shared__ ChainedShared<T> shared;
  const T* in = static_cast<const T*>(scan.in);
  // staged_tiles 0 (one round): a ring of one slot that stages nothing; the tile goes
  // straight into registers, without the round trip through shared memory.
  const bool staged = chain.staged_tiles != 0;
  const std::uint32_t stages = staged ? chain.staged_tiles : 1;
  const std::uint32_t buffer_vectors = blockDim.x * VPT;

  // Thread 0's last claim, for the dispatch order.
  std::uint32_t claimed = kNoTile;
  if (threadIdx.x == 0) {
    for (std::uint32_t s = 0; s + 1 < stages; ++s)
      shared.tiles[s] = claimed = claim_tile(chain, claimed);
  }
  clear_for_next_run(chain);
  __syncthreads();
  for (std::uint32_t s = 0; s + 1 < stages; ++s) {
    stage_tile<T, VPT>(in, scan.n, shared.tiles[s], scan.tile_count, staging + s * buffer_vectors);
  }
  for (std::uint32_t slot = 0;; slot = slot + 1 == stages ? 0 : slot + 1) {
    // Top up the ring: the buffer freed by the previous tile takes the next claim (with a
    // single buffer, this slot's own tile: no prefetch).
    const std::uint32_t refill = slot == 0 ? stages - 1 : slot - 1;
    __syncthreads();  // everyone is done with the previous tile and its buffer
    if (threadIdx.x == 0) shared.tiles[refill] = claimed = claim_tile(chain, claimed);
    __syncthreads();
    if (staged) {
      stage_tile<T, VPT>(in, scan.n, shared.tiles[refill], scan.tile_count,
                         staging + refill * buffer_vectors);
    }
    const std::uint32_t tile = shared.tiles[slot];
    if (tile >= scan.tile_count) break;
    Vector<T> loaded[VPT];
    if (staged && TileShape<T, VPT>::first(tile) + TileShape<T, VPT>::elements() <= scan.n) {
      // This tile's copies are in; the ones staged after it may not be.
      wait_for_stage(stages - 1);
      load_staged<T, VPT>(staging + slot * buffer_vectors, loaded);
    } else {
      load_tile<T, VPT>(in, scan.n, tile, M::identity(), loaded);
    }
    scan_tile<M, S, VPT, kStats>(scan, chain, tile, loaded, shared);
  }
}

}  // namespace gpuscan::cuda
