// The persistent chained scan (--staged-tiles 2..4; the default is per_tile_scan.cuh).
// With ChainArgs::fallback it is decoupled fallback (csdldf): a look-back that waits too
// long on a tile reduces that tile itself. Without, it is decoupled look-back (csdl),
// which waits as long as it takes and so needs forward progress. The same protocol as
// shaders/chained_scan.comp (docs/protocol.md).
#pragma once

#include <cuda_pipeline_primitives.h>

#include "cuda/kernels/look_back.cuh"
#include "cuda/kernels/tile_scan.cuh"

namespace gpuscan::cuda {

// The named barriers between the block's two roles (0 is __syncthreads, 1 the tile warps'
// own, team.cuh). Hand-overs alternate between two barriers by the parity of the tile's
// sequence number, because one side may arrive for tile j + 1 before the other has waited
// for tile j.
constexpr int kAggregateBarrier = 2;  // and 3: the tile warps hand a scanned tile over
constexpr int kVerdictBarrier = 4;    // and 5: the look-back warp's answer on it
constexpr int kReductionBarrier = 6;  // the tile warps' reduction of a tile to fall back on

__device__ __forceinline__ void arrive_at(int barrier) {
  asm volatile("bar.arrive %0, %1;" ::"r"(barrier), "r"(blockDim.x) : "memory");
}
__device__ __forceinline__ void wait_at(int barrier) {
  asm volatile("bar.sync %0, %1;" ::"r"(barrier), "r"(blockDim.x) : "memory");
}

// Partials sets of the block's tiles, by sequence number j: j % 3 (the tile still to be
// stored, the one being scanned, the next), and one for fallback reductions.
constexpr int kTilePartialSets = 3;
constexpr int kFallbackSet = kTilePartialSets;

// Block-wide scratch of the chained scan. The hand-over fields are indexed by the parity
// of the sequence number.
template <class T>
struct ChainedShared {
  BlockPartials<T, kTilePartialSets + 1> partials;
  std::uint32_t claimed[kMaxStagedTiles];  // counter order: tile of sequence number j % slots
  std::uint32_t handed_tile[2];            // to the look-back warp: the tile (or kNoTile) ...
  T aggregate[2];                          // ... and its reduction
  std::uint32_t verdict[2];                // back: kDone, or a tile to reduce for a fallback
  T prefix[2];                             // what precedes the tile, once kDone
  T reduction;                             // the tile warps' reduction of the verdict's tile
};

// The tiles a block takes, by sequence number j. From the counter, so that every tile
// before one has been claimed by a block that is running: thread 0 claims, and the tile
// warps' barrier makes the claim known. With dispatch_order, by block id: still safe, as a
// look-back falls back on a tile whose block has not started, and no claims at all.
struct TileOrder {
  const ChainArgs& chain;
  std::uint32_t* claimed;  // a ring of `slots` entries
  std::uint32_t slots;

  // Tile warps, together: makes tile(j) known.
  __device__ __forceinline__ void claim(std::uint32_t j) const {
    if (chain.dispatch_order) return;
    if (threadIdx.x == 0) claimed[j % slots] = atomicAdd(&chain.control->tile_counter, 1u);
    TileWarps::sync();
  }
  __device__ __forceinline__ std::uint32_t tile(std::uint32_t j) const {
    return chain.dispatch_order ? blockIdx.x + j * gridDim.x : claimed[j % slots];
  }
};

// The tile warps' side. Tile j's input arrives in staging slot j % slots (cp.async, issued
// slots - 1 tiles ahead); the warps scan it, post its aggregate, park the scanned rows in
// the same slot and hand the tile to the look-back warp. Then, while the look-back warp
// walks back for tile j, they finish tile j - 1: reduce whatever tiles its look-back falls
// back on, add its prefix and write it out, and refill its slot. A launch of one round
// (staged_tiles 0) has one slot, loads its tile straight into registers and stages nothing.
template <class M, class S, int VPT>
__device__ __forceinline__ void scan_tiles(const ScanArgs& scan, const ChainArgs& chain,
                                           ChainedShared<typename M::T>& shared, uint4* staging) {
  using T = typename M::T;
  using Shape = TileShape<T, VPT, TileWarps>;
  const T* in = static_cast<const T*>(scan.in);
  const T init = from_bits<T>(scan.init_bits);
  const bool one_round = chain.staged_tiles == 0;
  const std::uint32_t slots = one_round ? 1 : chain.staged_tiles;
  const std::uint32_t slot_vectors = TileWarps::threads() * VPT;
  const auto slot_of = [&](std::uint32_t j) { return staging + (j % slots) * slot_vectors; };
  const TileOrder order{chain, shared.claimed, slots};
  const Spine<M, S> spine{static_cast<typename S::Storage*>(chain.spine)};

  // Waits for the look-back warp's verdicts on tile `tile` (sequence number j), reducing
  // each tile it falls back on, then writes the tile from its slot.
  const auto finish = [&](std::uint32_t j, std::uint32_t tile) {
    for (;;) {
      wait_at(kVerdictBarrier + j % 2);
      const std::uint32_t target = shared.verdict[j % 2];
      if (target == kDone) break;
      T reduction =
          load_and_reduce<M, VPT, TileWarps>(in, scan.n, target, shared.partials, kFallbackSet);
      if (target == 0) reduction = M::combine(init, reduction);
      if (threadIdx.x == 0) shared.reduction = reduction;
      arrive_at(kReductionBarrier);
    }
    Vector<T> rows[VPT];
    load_staged<T, VPT>(slot_of(j), rows);
    store_tile<M, VPT, TileWarps>(static_cast<T*>(scan.out), scan.n, tile, scan.tile_count,
                                  scan.kind, shared.prefix[j % 2], shared.partials,
                                  j % kTilePartialSets, rows);
  };

  if (!one_round) {
    for (std::uint32_t j = 0; j + 1 < slots; ++j) {
      order.claim(j);
      stage_tile<T, VPT, TileWarps>(in, scan.n, order.tile(j), scan.tile_count, slot_of(j));
    }
  }
  std::uint32_t previous = kNoTile;  // the tile of sequence number j - 1
  for (std::uint32_t j = 0;; ++j) {
    // One round: a block per tile, and one slot. A second claim from the counter could
    // take a tile that another block has not claimed yet, and that tile's parked rows
    // would overwrite those of the first before they are written out.
    const bool takes_tile = !one_round || j == 0;
    if (takes_tile) order.claim(j + slots - 1);
    const std::uint32_t tile = takes_tile ? order.tile(j) : kNoTile;
    if (tile >= scan.tile_count) {
      if (threadIdx.x == 0) shared.handed_tile[j % 2] = kNoTile;
      arrive_at(kAggregateBarrier + j % 2);
      if (j > 0) finish(j - 1, previous);
      return;
    }
    Vector<T> loaded[VPT];
    if (!one_round && Shape::first(tile) + Shape::elements() <= scan.n) {
      wait_for_stage(slots - 2);  // the tiles staged after this one may still be in flight
      load_staged<T, VPT>(slot_of(j), loaded);
    } else {
      load_tile<T, VPT, TileWarps>(in, scan.n, tile, M::identity(), loaded);
    }
    Vector<T> rows[VPT];
    T aggregate = tile_local_scan<M, VPT, true, TileWarps>(loaded, shared.partials,
                                                           j % kTilePartialSets, rows);
    // The init value belongs to tile 0, for its owner and for any fallback on it alike.
    if (tile == 0) aggregate = M::combine(init, aggregate);
    if (warp_id() == 0) post_aggregate(spine, chain, tile, aggregate);
    park_rows<T, VPT>(slot_of(j), rows);
    if (threadIdx.x == 0) {
      shared.handed_tile[j % 2] = tile;
      shared.aggregate[j % 2] = aggregate;
    }
    arrive_at(kAggregateBarrier + j % 2);
    if (j > 0) finish(j - 1, previous);
    if (!one_round) {
      stage_tile<T, VPT, TileWarps>(in, scan.n, order.tile(j + slots - 1), scan.tile_count,
                                    slot_of(j + slots - 1));
    }
    previous = tile;
  }
}

// The look-back warp's side: for each tile handed over, in order, walk back and fall back
// (the tile warps reduce), post the tile's inclusive value and hand its prefix back.
template <class M, class S, bool kStats>
__device__ __forceinline__ void look_back_tiles(const ScanArgs& scan, const ChainArgs& chain,
                                                ChainedShared<typename M::T>& shared) {
  using T = typename M::T;
  LookBack<M, S, kStats> look{{static_cast<typename S::Storage*>(chain.spine)}, chain, {}};
  clear_for_next_run(chain);
  for (std::uint32_t j = 0;; ++j) {
    const int parity = j % 2;
    wait_at(kAggregateBarrier + parity);
    const std::uint32_t tile = shared.handed_tile[parity];
    if (tile == kNoTile) break;
    std::uint32_t cursor = tile - 1;
    T prefix = M::identity();
    bool done = tile == 0;
    for (;;) {
      if (!done) done = look.walk(tile, cursor, prefix, {kNoTile, M::identity()});
      if (done) break;
      if (lane_id() == 0) shared.verdict[parity] = cursor;
      arrive_at(kVerdictBarrier + parity);
      wait_at(kReductionBarrier);
      done = look.insert(cursor, prefix, shared.reduction);
    }
    if (tile != 0) {
      look.spine.post(tile, GS_STATE_INCLUSIVE, M::combine(prefix, shared.aggregate[parity]));
    }
    if (lane_id() == 0) {
      shared.prefix[parity] = tile == 0 ? from_bits<T>(scan.init_bits) : prefix;
      shared.verdict[parity] = kDone;
    }
    arrive_at(kVerdictBarrier + parity);
  }
  if constexpr (kStats) {
    if (lane_id() == 0) look.add_counts();
  }
}

// Persistent blocks of tile warps plus one look-back warp (the last). The look-back of one
// tile overlaps the scan of the next, and the next tiles' input is on its way into shared
// memory meanwhile (cp.async), so neither the look-back's round trips nor the loads stall
// the tile warps. Dynamic shared memory: `slots` buffers of a tile each, used as a ring.
template <class M, class S, int VPT, bool kStats>
__global__ void __launch_bounds__(chained_block_limit(VPT))
    chained_scan(ScanArgs scan, ChainArgs chain) {
  // Aligned to whole 128-byte lines: dynamic shared memory follows the static scratch with
  // only 16-byte alignment by default, and for u64 (1096 bytes of scratch) that put every
  // 16-byte cp.async destination across two 32-byte sectors, which doubled the L2 sectors
  // the copies read (docs/performance.md, C19).
  extern __shared__ __align__(128) uint4 staging[];
  __shared__ ChainedShared<typename M::T> shared;
  if (warp_id() == TileWarps::threads() / kWarpSize) {
    look_back_tiles<M, S, kStats>(scan, chain, shared);
  } else {
    scan_tiles<M, S, VPT>(scan, chain, shared, staging);
  }
}

}  // namespace gpuscan::cuda
