// In-place compaction on CUDA (docs/protocol.md, "In-place compaction"; model/
// compact_inplace.pml): select-if, select-flagged and unique with the output over the input,
// as shaders/common/in_place.glsl runs it on Vulkan. Kept element k goes to rank(k) <= k, so a
// tile's scatter lands on its own input and that of the tiles before it. Whoever counts a
// tile, its owner or a fallback, claims it with a compare-and-swap after its loads, and only
// the claim's winner (the tile's holder) scatters it; a count is published only from a claim
// word. The walk holds no more than its own tile and one other: a tile that stays not ready
// is skipped (the gap), and the tiles from the newest INCLUSIVE one below the gap up to the
// gap are walked in order, each with its prefix known, a window a step: ready and claimed
// tiles are taken at once, the others claimed one at a time.
//
// Ordering ("Ordering"): a release fence between a tile's loads and its claim (and the owner's
// READY post), an acquire-release fence after the spine and claim reads a prefix comes from,
// before any post or scatter that uses it; __threadfence() is both at device scope. The block
// barriers order the other warps' loads and stores with the fencing lanes (causality order is
// transitive). The input is read through __ldcg (tile_io.cuh) and plain loads, never the
// read-only path.
#pragma once

#include "cuda/kernels/compaction.cuh"
#include "shaders/common/compaction_interface.h"

namespace gpuscan::cuda {

// What the look-back warp hands the block in place.
struct InPlaceShared {
  std::uint32_t lost;         // the owner's claim was lost: a fallback holds the tile
  std::uint32_t gap;          // the first tile the walk skipped, or kNoTile
  std::uint32_t from;         // the tile after the newest INCLUSIVE one below the gap
  std::uint64_t above_gap;    // the READY counts after the gap (without a gap: the prefix)
  std::uint64_t below_from;   // the inclusive count before `from`
  std::uint64_t step_prefix;  // the up-walk: the kept elements before step_next
  std::uint32_t step_next;    // the tile it goes on from
  std::uint32_t step_claims;  // tile step_next is to be claimed (else: read on)
  std::uint32_t claim;        // a claim word as the block's claimer left it
};

// The claim word of `tile`: after the tile-state words of the run's spine half.
__device__ __forceinline__ std::uint32_t* claim_word(const ChainArgs& chain,
                                                     std::uint32_t tile_count, std::uint32_t tile) {
  return chain.spines + std::uint64_t{run_half()} * chain.half_words +
         std::uint64_t{kCompactStateWords} * tile_count + tile;
}

// Whether a tile's kept elements are all in place already: every element kept and its prefix
// its first index. It then writes nothing; its last element is the one store with
// rank == index that could meet unique's read of the element before the next tile
// (docs/protocol.md, "The Vulkan kernel": skipped writes).
template <class T, int VPT>
__device__ __forceinline__ bool kept_in_place(const CompactArgs& a, std::uint32_t tile,
                                              std::uint64_t prefix, std::uint32_t kept) {
  const std::uint64_t first = TileShape<T, VPT>::first(tile);
  const std::uint64_t elements = min(a.n - first, std::uint64_t{TileShape<T, VPT>::elements()});
  return kept == elements && prefix == first;
}

// The look-back warp, past the gap: the newest INCLUSIVE tile below `gap`, read without
// waiting. Returns the tile after it, and in `base` its inclusive value; tile 0 and nothing
// if there is none.
template <class M, class S, bool kStats>
__device__ std::uint32_t newest_inclusive_below(LookBack<M, S, kStats>& look, std::uint32_t gap,
                                                std::uint64_t& base) {
  using Sp = Spine<M, S>;
  base = M::identity();
  std::uint32_t cursor = gap;  // the tiles below it are still to read
  while (cursor > 0) {
    const typename S::Word word = look.spine().read_window(cursor - 1, 0);
    if constexpr (kStats) ++look.counts.steps;
    const std::uint32_t state = Sp::tile_state(word);
    const std::uint64_t value = Sp::tile_value(word);
    const int inclusive = Sp::first_slot_in(state, GS_STATE_INCLUSIVE);
    if (inclusive < Sp::kWindow) {
      base = Sp::reduce_window(value, inclusive, inclusive + 1);
      return cursor - inclusive;
    }
    cursor = cursor > Sp::kWindow ? cursor - Sp::kWindow : 0;
  }
  return 0;
}

// The look-back warp: one step of the up-walk from tile `u`, with `prefix` the kept elements
// before it (docs/protocol.md, "In-place compaction", the up-walk; "The CUDA kernel"). Reads
// the tile-state word and the claim word of each tile in u..min(gap, u + kWindow - 1) at once
// (slot s: tile top - s), and takes the run of KNOWN tiles from u on: READY, INCLUSIVE, or
// claimed by someone (the count from the claim word: its holder's, counted from the input it
// read before claiming). The newest INCLUSIVE tile in the run resets the prefix. The run ends
// at the oldest tile that is neither ready nor claimed, which is claimed next. Shares the
// step's outcome through `ip`; returns whether this lane posts its word of `tile` as
// INCLUSIVE `inclusive` (the READY and claimed tiles of the run after its newest INCLUSIVE
// one), which it may do only after the barrier and its fence (walk_up).
template <class S, bool kStats>
__device__ bool read_up_window(LookBack<KeptCount, S, kStats>& look, const ChainArgs& chain,
                               std::uint32_t tile_count, InPlaceShared& ip, std::uint32_t u,
                               std::uint32_t gap, std::uint64_t prefix, std::uint32_t& tile,
                               std::uint64_t& inclusive) {
  using Sp = Spine<KeptCount, S>;
  const std::uint32_t top = min(gap, u + Sp::kWindow - 1);
  const int end = static_cast<int>(top - u) + 1;  // slots [0, end) hold tiles top..u
  const int slot = Sp::window_slot();
  const bool in_window = Sp::word_index() == 0 && slot < end;  // tests and counts the tile
  const typename S::Word word = look.spine().read_window(top, 0);
  const std::uint32_t claim =
      in_window ? relaxed_load(claim_word(chain, tile_count, top - slot)) : 0u;
  if constexpr (kStats) ++look.counts.steps;
  const std::uint32_t state = Sp::tile_state(word);
  const std::uint64_t value = Sp::tile_value(word);
  const bool ready = state == GS_STATE_READY || state == GS_STATE_INCLUSIVE;
  // The run is slots [lo, end): the oldest tile that is neither ready nor claimed stops it.
  const unsigned unknown = __ballot_sync(kFullMask, in_window && !ready && claim == 0u);
  const int lo = unknown == 0 ? 0 : (31 - __clz(unknown)) / Sp::K + 1;
  // The newest INCLUSIVE tile in the run (slot hi) gives the base; without one, `prefix`.
  const unsigned resets =
      __ballot_sync(kFullMask, in_window && state == GS_STATE_INCLUSIVE && slot >= lo);
  const int hi = resets == 0 ? end : (__ffs(resets) - 1) / Sp::K;
  const std::uint64_t reset_value = __shfl_sync(kFullMask, value, min(hi, Sp::kWindow - 1) * Sp::K);
  const std::uint64_t base = resets == 0 ? prefix : reset_value;
  // The counts of the READY and claimed tiles in slots [lo, hi), summed over the slots at or
  // above each lane (older tiles): a Kogge-Stone scan downwards. A window's counts are at
  // most kWindow tiles of elements, far below 2^32.
  const bool counted = in_window && slot >= lo && slot < hi;
  std::uint32_t older =
      counted ? (state == GS_STATE_READY ? static_cast<std::uint32_t>(value) : claim & ~GS_CLAIMED)
              : 0u;
#pragma unroll
  for (int d = 1; d < kWarpSize; d <<= 1) {
    const std::uint32_t above = __shfl_down_sync(kFullMask, older, d);
    if (lane_id() + d < kWarpSize) older += above;
  }
  const std::uint32_t total = __shfl_sync(kFullMask, older, 0);
  const std::uint32_t own = __shfl_sync(kFullMask, older, slot * Sp::K);
  if constexpr (kStats) {
    // Tiles that needed a claim and had one: fallbacks, as a claim the walk makes itself.
    look.counts.fallbacks += __popc(__ballot_sync(kFullMask, in_window && slot >= lo && !ready));
  }
  __threadfence();  // acquire: the window's reads before the posts and the claim they lead to
  if (lane_id() == 0) {
    ip.step_prefix = base + total;
    ip.step_next = unknown == 0 ? top + 1 : top - lo + 1;
    ip.step_claims = unknown != 0;
  }
  tile = top - slot;
  inclusive = base + own;
  return slot >= lo && slot < hi;
}

// All threads: the up-walk over tiles [from, gap] from `prefix`, the kept elements before
// tile `from`, a window a step (read_up_window): the known tiles are taken and posted
// INCLUSIVE at once, and the first tile neither ready nor claimed is claimed, scattered at its
// prefix if the claim was won, and posted INCLUSIVE either way (docs/protocol.md, "In-place
// compaction"). Returns the kept elements up to and with `gap`.
template <class T, Compaction kOp, class S, bool kStats, int VPT, class Pred>
__device__ std::uint64_t walk_up(const CompactArgs& a, const ChainArgs& chain,
                                 LookBack<KeptCount, S, kStats>& look,
                                 BlockPartials<std::uint32_t, 2>& partials, InPlaceShared& ip,
                                 std::uint32_t from, std::uint32_t gap, std::uint64_t prefix,
                                 const Pred& pred) {
  const bool looks_back = warp_id() == 0;
  for (std::uint32_t u = from; u <= gap;) {
    __syncthreads();  // everyone has read the step before's `ip`
    bool posts = false;
    std::uint32_t posted = 0;
    std::uint64_t inclusive = 0;
    if (looks_back) {
      posts = read_up_window(look, chain, a.tile_count, ip, u, gap, prefix, posted, inclusive);
    }
    __syncthreads();
    prefix = ip.step_prefix;
    u = ip.step_next;
    if (looks_back) {
      __threadfence();
      if (posts) look.spine().post_lane_word(posted, GS_STATE_INCLUSIVE, inclusive);
    }
    if (!ip.step_claims) continue;
    // Tile u was neither ready nor claimed when read: the whole block loads and counts it as
    // its owner would, keeps it in registers for the scatter (the own tile is staged in shared
    // memory) and claims it (a stale 0 in the window: the claim settles it, and a loser takes
    // the claim word's count).
    Vector<T> rows[VPT];
    load_tile<T, VPT>(static_cast<const T*>(a.in), a.n, u, T{}, rows);
    std::uint32_t masks[VPT];
    keep_masks<T, kOp, VPT>(a, u, rows, masks, pred);
    std::uint32_t offsets[VPT];
    const std::uint32_t kept =
        scan_tile<RowCount, T, VPT>(masks, partials, kCompactRecountSet, offsets);
    __syncthreads();  // every thread's loads before the release
    if (threadIdx.x == 0) {
      __threadfence();  // release
      ip.claim = atomicCAS(claim_word(chain, a.tile_count, u), 0u, GS_CLAIMED | kept);
      __threadfence();  // acquire (a lost claim's count)
    }
    __syncthreads();
    std::uint32_t claim = ip.claim;
    const bool won = claim == 0;
    if (won) {
      if (!kept_in_place<T, VPT>(a, u, prefix, kept)) {
        T* out = static_cast<T*>(a.out);
        const std::uint32_t warp_before = warp_prefix<RowCount>(partials, kCompactRecountSet);
#pragma unroll
        for (int k = 0; k < VPT; ++k) {
          std::uint64_t at = prefix + warp_before + offsets[k];
#pragma unroll
          for (int e = 0; e < Vector<T>::size; ++e) {
            if ((masks[k] >> e) & 1u) out[at++] = rows[k].x[e];
          }
        }
      }
      claim = GS_CLAIMED | kept;
    }
    const std::uint64_t count = claim & ~GS_CLAIMED;
    if (looks_back) {
      __threadfence();
      look.spine().post(u, GS_STATE_INCLUSIVE, prefix + count);
      // A won claim counts as a fallback's insertion (statistics, the starvation mark).
      if constexpr (kStats) {
        ++look.counts.fallbacks;
        if (won) ++look.counts.insertions;
      }
      if (won && !look.starved) {
        look.starved = true;
        if (lane_id() == 0) atomicMax(&look.control()->starved, 1u);
      }
    }
    prefix += count;
    ++u;
  }
  return prefix;
}

// The kernel for a tile in place (select-if, select-flagged, unique; one run, never in
// chunks): compact_tiles' loads and staging, then the claim, the walk with its gap and
// up-walk, and the scatter of the staged elements.
template <class T, Compaction kOp, class S, bool kStats, int VPT, class Pred>
__global__ void __launch_bounds__(kCompactBlockLimit) __maxnreg__(compaction_policy(kOp).registers)
    compact_tiles_in_place(CompactArgs a, ChainArgs chain, Pred pred) {
  static_assert(kOp == Compaction::select_if || kOp == Compaction::select_flagged ||
                kOp == Compaction::unique);
  using M = KeptCount;
  using L = RowCount;
  __shared__ CompactShared<L> shared;
  __shared__ InPlaceShared ip;
  extern __shared__ uint4 stage_words[];
  T* stage = reinterpret_cast<T*>(stage_words);
  const bool looks_back = warp_id() == 0;
  const std::uint64_t spine_words = std::uint64_t{a.tile_count} * kCompactSpineWords;
  LookBack<M, S, kStats> look{chain, {}};
  Turn turn{0, 0, 0};
  // The turn first, then the tile: a blocked owner must not load its tile.
  if (looks_back) turn = take_turn(chain);
  if (threadIdx.x == 0) {
    shared.tile = chain.dispatch_order
                      ? blockIdx.x
                      : atomicAdd(&chain.state->control[turn.half].tile_counter, 1u);
  }
  __syncthreads();
  const std::uint32_t tile = shared.tile;
  if (looks_back) clear_for_next_run(chain, turn);
  // Simulated blocking in place: a blocked owner abandons its tile before reading it (the
  // last tile is never blocked), so its successors' fallbacks must claim and scatter it.
  if (tile != a.tile_count - 1 && ((tile + 1) & chain.blocking_mask) == 0) {
    if (looks_back) hand_on_turn(chain, turn.place, spine_words);
    return;
  }
  typename S::Word window{};  // NOT_READY
  if (looks_back && tile != 0) window = look.spine().read_window(tile - 1, 0);
  Vector<T> rows[VPT];
  load_tile<T, VPT>(static_cast<const T*>(a.in), a.n, tile, T{}, rows);
  std::uint32_t masks[VPT];
  keep_masks<T, kOp, VPT>(a, tile, rows, masks, pred);
  constexpr std::uint32_t part = TileShape<T, VPT>::per_warp;
  T* const warp_stage = stage + warp_id() * part;
  std::uint32_t kept = 0;
  if constexpr (kWarpStaged<kOp>) {
    block_scan_totals<L, WholeBlock>(
        shared.partials, kCompactOwnSet,
        warp_kept<L, T, kOp, VPT, true>(tile, rows, masks, warp_stage, nullptr));
    kept = block_total<L, WholeBlock>(shared.partials, kCompactOwnSet);
  } else {
    std::uint32_t offsets[VPT];
    kept = scan_tile<L, T, VPT>(masks, shared.partials, kCompactOwnSet, offsets);
    stage_tile<T, VPT>(rows, masks, offsets, warp_prefix<L>(shared.partials, kCompactOwnSet),
                       stage);
  }
  __syncthreads();  // every thread's loads before the look-back warp's release fence

  if (looks_back) {
    // The owner's claim, in the look-back warp alone: one release fence covers the claim and
    // the READY post. Claimed already: a fallback holds the tile and scatters it, and this
    // block's loads may have seen it overwritten: no post, no walk, no scatter.
    __threadfence();
    std::uint32_t claim = 0;
    if (lane_id() == 0)
      claim = atomicCAS(claim_word(chain, a.tile_count, tile), 0u, GS_CLAIMED | kept);
    const bool lost = __shfl_sync(kFullMask, claim, 0) != 0;
    std::uint32_t cursor = tile - 1;
    std::uint64_t prefix = M::identity();
    bool done = tile == 0;
    std::uint32_t from = 0;
    std::uint64_t below_from = M::identity();
    if (lost) {
      done = true;
    } else if (done) {
      look.spine().post(tile, GS_STATE_INCLUSIVE, kept);
    } else {
      look.spine().post(tile, GS_STATE_READY, kept);
      const EarlyWindow<std::uint64_t> early = look.note_early_window(tile, window);
      done = look.walk(tile, cursor, prefix, early);
      // Not done: tile `cursor` stayed not ready for the walk's patience. It is the gap,
      // skipped, not fallen back on: `prefix` holds the READY tiles above it.
      if (!done) from = newest_inclusive_below(look, cursor, below_from);
    }
    __threadfence();  // acquire: the prefix's sources before its use
    if (lane_id() == 0) {
      ip.lost = lost;
      ip.gap = done ? kNoTile : cursor;
      ip.from = from;
      ip.above_gap = prefix;
      ip.below_from = below_from;
    }
  }
  __syncthreads();
  if (ip.lost) {
    if (looks_back) {
      if constexpr (kStats) {
        if (lane_id() == 0) look.add_counts();
      }
      hand_on_turn(chain, turn.place, spine_words);
    }
    return;
  }
  std::uint64_t before = ip.above_gap;
  if (ip.gap != kNoTile) {
    before += walk_up<T, kOp, S, kStats, VPT>(a, chain, look, shared.partials, ip, ip.from, ip.gap,
                                              ip.below_from, pred);
  }
  if (looks_back) {
    __threadfence();
    if (tile != 0) look.spine().post(tile, GS_STATE_INCLUSIVE, before + kept);
    if constexpr (kStats) {
      if (lane_id() == 0) look.add_counts();
    }
    hand_on_turn(chain, turn.place, spine_words);
  }
  if (tile == a.tile_count - 1 && threadIdx.x == 0) *a.count = before + kept;
  if (kept_in_place<T, VPT>(a, tile, before, kept)) return;
  if constexpr (kWarpStaged<kOp>) {
    // Set kCompactOwnSet holds the warps' inclusive values until the kernel ends.
    const std::uint64_t warp_before = warp_prefix<L>(shared.partials, kCompactOwnSet);
    const std::uint32_t kept_here = shared.partials.warp_totals[kCompactOwnSet][warp_id()] -
                                    static_cast<std::uint32_t>(warp_before);
    write_warp_staged<T, kOp, VPT>(a, tile, before, warp_before, kept_here, before + kept,
                                   warp_stage, nullptr);
  } else {
    write_tile<T>(a, before, kept, stage);
  }
}

}  // namespace gpuscan::cuda
