// Device level, above the spine (tile_state.cuh): one warp's look-back for a tile, with its
// fallback insertions, the early window read along with the tile's loads, and the clearing
// of the next run's spine and counters. Both chained-scan kernels use it. It is the
// look-back docs/protocol.md specifies ("The look-back the kernels run"), as in
// shaders/chained_scan.comp; where the two differ, that page says why.
#pragma once

#include "cuda/kernels/tile_state.cuh"
#include "cuda/launch.hpp"

namespace gpuscan::cuda {

constexpr std::uint32_t kNoTile = 0xFFFFFFFFu;
constexpr std::uint32_t kDone = 0xFFFFFFFFu;

// Where a run works, as the look-back warp of each block reads it from the ChainState at
// the block's start: the half of the spine and counters, and how much of the other half
// the run before left to clear.
struct Turn {
  std::uint32_t half;
  std::uint64_t clear_words;
  std::uint32_t place;  // lane 0: how many blocks of the launch had read the turn before
};

// The run's half, once the look-back warp has read it: kept in shared memory and read
// again at each use rather than held in registers, which the tile's rows need (64-bit
// types spilled five times as much with the half and two pointers held through the scan).
__device__ __forceinline__ volatile std::uint32_t& run_half() {
  __shared__ std::uint32_t half;
  return half;
}

// Reads the run's turn (the whole warp, one address) and counts the block as started. The
// count's operand depends on what was read, so it cannot be seen before the reads are done:
// once every block has counted itself, none reads the turn again, and the last may hand it
// on mid-launch (hand_on_turn).
__device__ __forceinline__ Turn take_turn(const ChainArgs& chain) {
  const std::uint32_t half = __ldcg(&chain.state->turn);
  const std::uint64_t dirty0 = __ldcg(&chain.state->dirty[0]);
  const std::uint64_t dirty1 = __ldcg(&chain.state->dirty[1]);
  Turn turn{half, half == 0 ? dirty1 : dirty0, 0};
  if (lane_id() == 0) {
    run_half() = half;
    const auto after_reads = static_cast<std::uint32_t>((half | dirty0 | dirty1) >> 63);
    turn.place = atomicAdd(&chain.state->started, 1u + after_reads);
  }
  __syncwarp();
  return turn;
}

// The block that started last hands the turn on to the next run: this run's half holds
// `words` written words, the other half is clean.
__device__ __forceinline__ void hand_on_turn(const ChainArgs& chain, std::uint32_t place,
                                             std::uint64_t words) {
  if (lane_id() == 0 && place == gridDim.x - 1) {
    const std::uint32_t half = run_half();
    chain.state->dirty[half] = words;
    chain.state->dirty[half ^ 1u] = 0;
    chain.state->started = 0;
    chain.state->turn = half ^ 1u;
  }
}

// The next run's spine and counters, its starvation mark among them, start from zero: one
// warp of each block clears its share (before its tile's loads are back), as the run after
// this one cannot start before this one ends (docs/protocol.md, "Reset between runs").
__device__ __forceinline__ void clear_for_next_run(const ChainArgs& chain, const Turn& turn) {
  std::uint32_t* next_spine = chain.spines + (turn.half ^ 1u) * chain.half_words;
  const std::uint64_t stride = std::uint64_t{gridDim.x} * kWarpSize;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * kWarpSize + lane_id(); i < turn.clear_words;
       i += stride) {
    next_spine[i] = 0;
  }
  constexpr int control_words = sizeof(RunControl) / sizeof(std::uint32_t);
  static_assert(control_words <= kWarpSize);
  if (blockIdx.x == 0 && lane_id() < control_words) {
    reinterpret_cast<std::uint32_t*>(&chain.state->control[turn.half ^ 1u])[lane_id()] = 0;
  }
}

// Posts a tile's own aggregate, from one warp: INCLUSIVE for tile 0 (its reduction is its
// prefix), READY for the others unless simulated blocking keeps the tile from posting. In a
// batched scan a tile that holds a row start (`final`) posts INCLUSIVE too: its aggregate,
// from that start, is its inclusive value.
template <class M, class S>
__device__ __forceinline__ void post_aggregate(const Spine<M, S> spine, const ChainArgs& chain,
                                               std::uint32_t tile, typename M::T aggregate,
                                               bool final = false) {
  if (tile == 0) {
    spine.post(tile, GS_STATE_INCLUSIVE, aggregate);
  } else if (((tile + 1) & chain.blocking_mask) != 0) {
    spine.post(tile, final ? GS_STATE_INCLUSIVE : GS_STATE_READY, aggregate);
  }
}

// What the look-back warp did; counted by the statistics variant only.
struct LookbackCounts {
  std::uint32_t spins = 0, steps = 0, fallbacks = 0, insertions = 0;
};

// What the window before a tile, read along with the tile's loads, already settled:
// everything up to tile `end` (kNoTile: nothing) reduces to `value`. A READY or INCLUSIVE
// word's message never stops being true, so the walk after the scan may treat `end` as
// an INCLUSIVE tile (docs/protocol.md, "The early window").
template <class T>
struct EarlyWindow {
  std::uint32_t end;
  T value;
};

// One warp's walk and its fallback insertions.
template <class M, class S, bool kStats>
struct LookBack {
  using T = typename M::T;
  using Sp = Spine<M, S>;
  const ChainArgs& chain;
  LookbackCounts counts;
  bool starved = false;  // whether this warp has seen the run's starvation mark

  // This run's half of the spine and its counters (run_half).
  __device__ __forceinline__ Sp spine() const {
    return Sp{reinterpret_cast<typename S::Storage*>(chain.spines + run_half() * chain.half_words)};
  }
  __device__ __forceinline__ RunControl* control() const {
    return &chain.state->control[run_half()];
  }

  // How many steps a look-back of `tile` waits on the not-ready tile `cursor` before it
  // falls back (docs/protocol.md, "Patience"): max_spins for the nearest successor, longer
  // the further back the blocking tile lies (up to 64 times), so that the nearest
  // successor's insertion serves the others. Once the run is starved, the nearest successor
  // waits one step: a tile that is merely late rarely needs more, and a starved one never
  // posts.
  __device__ __forceinline__ std::uint32_t patience(std::uint32_t tile,
                                                    std::uint32_t cursor) const {
    if (!chain.fallback) return chain.max_spins;
    return starved && tile - cursor == 1 ? 1 : chain.max_spins * min(tile - cursor, 64u);
  }

  // The early window of `tile` from `word`, its window before `tile`: the newest INCLUSIVE
  // tile in it and the READY tiles after it, up to the first that was not ready.
  __device__ EarlyWindow<T> note_early_window(std::uint32_t tile, const typename S::Word& word) {
    if constexpr (kStats) ++counts.steps;
    const std::uint32_t state = Sp::tile_state(word);
    const T value = Sp::tile_value(word);
    const int inclusive = Sp::first_slot_in(state, GS_STATE_INCLUSIVE);
    if (inclusive == Sp::kWindow) return {kNoTile, M::identity()};
    const int not_ready = Sp::last_slot_in(state, GS_STATE_NOT_READY, inclusive);
    const int first = not_ready == Sp::kWindow ? 0 : not_ready + 1;
    return {tile - 1 - first, Sp::reduce_window(value, first, inclusive + 1)};
  }

  // Walks back from `cursor`, lookback_depth windows per step (independent reads: one
  // round trip), accumulating into `prefix`, until an INCLUSIVE tile ends the walk (true),
  // or the newest tile not yet taken stays unreadable for patience() steps (false: the
  // caller falls back on `cursor`). csdl then gives up and reports it instead. `early`
  // stands for an INCLUSIVE tile, so the walk ends there at the latest.
  __device__ bool walk(std::uint32_t tile, std::uint32_t& cursor, T& prefix,
                       const EarlyWindow<T>& early) {
    if (cursor == early.end) {
      prefix = M::combine(early.value, prefix);
      return true;
    }
    std::uint32_t spins = 0;
    // Loaded just before the first window, in the same round trip (docs/protocol.md, "The
    // starvation mark", says why there and not later).
    if (chain.fallback && !starved) starved = relaxed_load(&control()->starved) != 0;
    for (;;) {
      typename S::Word words[kMaxLookbackDepth];
#pragma unroll
      for (int d = 0; d < kMaxLookbackDepth; ++d) {
        if (d < chain.lookback_depth) words[d] = spine().read_window(cursor, d);
      }
      if constexpr (kStats) ++counts.steps;
      // Take the windows in order while they are all READY; stop at an INCLUSIVE tile
      // (done) or at a tile not ready yet (read again from there).
      bool moved = false;
#pragma unroll
      for (int d = 0; d < kMaxLookbackDepth; ++d) {
        if (d >= chain.lookback_depth) break;
        std::uint32_t state = Sp::tile_state(words[d]);
        T value = Sp::tile_value(words[d]);
        const std::uint32_t back = d * Sp::kWindow + Sp::window_slot();
        if (early.end != kNoTile && back <= cursor && cursor - back == early.end) {
          state = GS_STATE_INCLUSIVE;
          value = early.value;
        }
        const int not_ready = Sp::first_slot_in(state, GS_STATE_NOT_READY);
        const int inclusive = Sp::first_slot_in(state, GS_STATE_INCLUSIVE);
        if (inclusive < not_ready) {
          prefix = M::combine(Sp::reduce_window(value, 0, inclusive + 1), prefix);
          return true;
        }
        // Slots before tile 0 read NOT_READY, and tile 0 is never READY: cursor stays >= 0.
        prefix = M::combine(Sp::reduce_window(value, 0, not_ready), prefix);
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
        if (!chain.fallback && lane_id() == 0) atomicAdd(&control()->abandoned, 1u);
        return !chain.fallback;
      }
    }
  }

  // Offers the fallback's `reduction` of `cursor` and continues from what was there.
  // Returns true when the prefix is complete. `final`: the reduction is the tile's
  // inclusive value (a batched scan's tile holding a row start).
  __device__ bool insert(std::uint32_t& cursor, T& prefix, T reduction, bool final = false) {
    final = final || cursor == 0;
    const auto before =
        spine().post(cursor, final ? GS_STATE_INCLUSIVE : GS_STATE_READY, reduction);
    const bool was_posted = S::state_of(before) != GS_STATE_NOT_READY;
    const bool inserted = __ballot_sync(kFullMask, was_posted) == 0;
    if constexpr (kStats) {
      ++counts.fallbacks;
      if (inserted) ++counts.insertions;
    }
    if (inserted && !starved) {
      starved = true;
      if (lane_id() == 0) atomicMax(&control()->starved, 1u);
    }
    const std::uint32_t state = __shfl_sync(kFullMask, Sp::tile_state(before), 0);
    const T value = __shfl_sync(kFullMask, Sp::tile_value(before), 0);
    if (state == GS_STATE_INCLUSIVE) {
      prefix = M::combine(value, prefix);
      return true;
    }
    prefix = M::combine(reduction, prefix);
    if (final) return true;
    cursor -= 1;
    return false;
  }

  __device__ void add_counts() const {
    if (counts.spins) atomicAdd(&control()->spins, counts.spins);
    if (counts.steps) atomicAdd(&control()->lookback_steps, counts.steps);
    if (counts.fallbacks) atomicAdd(&control()->fallbacks, counts.fallbacks);
    if (counts.insertions) atomicAdd(&control()->insertions, counts.insertions);
  }
};

}  // namespace gpuscan::cuda
