// Device level: the look-back of the chained kernels and its fallback (docs/protocol.md,
// "The look-back the kernels run"), over the tile value TILE_VALUE of tile_state.glsl: the
// scan's element, or a compaction kernel's count. The kernel's main() claims its tile,
// posts it and drives the rounds (a look-back step, and where it returns a tile to reduce,
// the workgroup's reduction of that tile and insert_fallback).
#ifndef GPUSCAN_LOOK_BACK_GLSL
#define GPUSCAN_LOOK_BACK_GLSL

#include "interface.h"
#include "tile_state.h"
#include "types.glsl"
#include "tile_shape.glsl"
#include "subgroup_scan.glsl"
#include "tile_state.glsl"
#include "run_control.glsl"

layout(constant_id = GS_SPEC_FALLBACK) const bool FALLBACK = true;
// Look-back steps without progress after which csdldf falls back, or csdl gives up and
// says so in the control buffer (the host picks a wait far longer than any on a GPU with
// forward progress, and short enough to stay under the loop-iteration limit of CPU
// drivers: llvmpipe ends any shader loop after about 65535 iterations in all, silently,
// so an unbounded spin there would turn a long wait into a wrong prefix).
layout(constant_id = GS_SPEC_MAX_SPINS) const uint MAX_SPINS = 4;

// The statistics variant (a pipeline of its own, so the fast path pays nothing) counts,
// in the look-back lanes, what the look-back did; the workgroup adds them up at the end.
layout(constant_id = GS_SPEC_STATISTICS) const bool STATISTICS = false;
uint spin_count = 0;       // steps that found the newest tile not ready
uint step_count = 0;       // look-back steps (LOOKBACK_DEPTH window reads each)
uint fallback_count = 0;   // fallbacks initiated
uint insertion_count = 0;  // fallback insertions into a tile that was NOT_READY

const uint LOOKBACK_DONE = 0xFFFFFFFFu;
const uint NO_TILE = 0xFFFFFFFFu;
// What the window read while the tile was scanned showed (note_early_window).
shared uint wg_early_end;
shared TILE_VALUE wg_early_value;

bool is_blocked(uint tile) { return ((tile + 1) & pc.blocking_mask) == 0; }

// How many steps a look-back of `tile` waits on the not-ready tile `cursor` before it
// falls back (docs/protocol.md, "Patience"): MAX_SPINS for the nearest successor, longer
// the further back the blocking tile lies (up to 64 times). Every successor of a blocking
// tile reaches it; if all fell back after the same wait, a blocking tile would be reduced
// dozens of times over, while the nearest one's insertion serves them all. Bounded, so
// progress stays guaranteed. Once the run has seen a starved tile (`starved`), the nearest
// successor waits one step: a tile that is merely late rarely needs more, and a starved
// one never posts. The others keep their longer waits, for the nearest one's insertion.
uint patience(uint tile, uint cursor, bool starved) {
  if (!FALLBACK) return MAX_SPINS;
  return starved && tile - cursor == 1 ? 1 : MAX_SPINS * min(tile - cursor, 64u);
}
bool starved = false;  // look-back lanes: whether this run has seen a starved tile

// Look-back lanes: walks back from `cursor`, LOOKBACK_DEPTH windows per step,
// accumulating into `prefix`, until an INCLUSIVE tile ends the walk (true), or the newest
// tile not yet taken stays unreadable for patience() steps (false: the caller falls back
// on `cursor`). Without FALLBACK, MAX_SPINS steps without progress make it give up and
// report it. What the early window showed (note_early_window) stands for tile `early_end`
// as if that tile were INCLUSIVE with `early_value`, so the walk ends there at the latest.
bool look_back(uint tile, inout uint cursor, inout TILE_VALUE prefix, uint early_end, TILE_VALUE early_value) {
  if (cursor == early_end) {
    prefix = tile_combine(early_value, prefix);
    return true;
  }
  uint spins = 0;
  // Loaded just before the first window, in the same round trip (docs/protocol.md, "The
  // starvation mark", says why there and not later).
  if (FALLBACK && !starved) starved = read_starved();
  for (;;) {
    TILE_WORD words[LOOKBACK_DEPTH];
    for (uint depth = 0; depth < LOOKBACK_DEPTH; ++depth) words[depth] = read_window(cursor, depth);
    if (STATISTICS) ++step_count;
    // Take the windows in order while they are all READY; stop at an INCLUSIVE tile (done)
    // or at a tile not ready yet (read again from there).
    bool moved = false;
    for (uint depth = 0; depth < LOOKBACK_DEPTH; ++depth) {
      uint state = tile_state(words[depth]);
      TILE_VALUE value = tile_value(words[depth]);
      const uint back = depth * WINDOW + window_slot();
      if (early_end != NO_TILE && back <= cursor && cursor - back == early_end) {
        state = GS_STATE_INCLUSIVE;
        value = early_value;
      }
      const uint not_ready = first_slot_in(state, GS_STATE_NOT_READY);
      const uint inclusive = first_slot_in(state, GS_STATE_INCLUSIVE);
      if (inclusive < not_ready) {
        prefix = tile_combine(reduce_window(value, 0, inclusive + 1), prefix);
        return true;
      }
      // Slots before tile 0 read NOT_READY, and tile 0 is never READY: cursor stays >= 0.
      prefix = tile_combine(reduce_window(value, 0, not_ready), prefix);
      cursor -= not_ready;
      moved = moved || not_ready > 0;
      if (not_ready < WINDOW) break;
    }
    if (moved) {
      spins = 0;
      continue;
    }
    if (STATISTICS) ++spin_count;
    if (++spins >= patience(tile, cursor, starved)) {
      if (!FALLBACK && sg_lane() == 0) atomicAdd(control[GS_CONTROL_LOOKBACK_ABANDONED], 1);
      return !FALLBACK;
    }
  }
}

// Look-back lanes: counts a fallback (statistics) and, where it `inserted` into a tile nobody
// had posted, sets the starvation mark.
void note_fallback(bool inserted) {
  if (STATISTICS) {
    ++fallback_count;
    if (inserted) ++insertion_count;
  }
  if (inserted && !starved) {
    starved = true;
    if (sg_lane() == 0) mark_starved();
  }
}

// Look-back lanes: offers the fallback's `reduction` of `cursor` and continues from what
// was there. Returns true when the prefix is complete. `final`: the reduction is the tile's
// inclusive value (tile 0, or in a batched scan a tile that holds a row start).
bool insert_fallback(inout uint cursor, inout TILE_VALUE prefix, TILE_VALUE reduction,
                     bool final) {
  const TILE_WORD before =
      post_tile(cursor, final ? GS_STATE_INCLUSIVE : GS_STATE_READY, reduction);
  const bool was_posted = state_of(before) != GS_STATE_NOT_READY;
  note_fallback(subgroupBallotBitCount(subgroupBallot(was_posted)) == 0);
  const uint state = subgroupBroadcast(tile_state(before), 0);
  const TILE_VALUE value = subgroupBroadcast(tile_value(before), 0);
  if (state == GS_STATE_INCLUSIVE) {
    prefix = tile_combine(value, prefix);
    return true;
  }
  prefix = tile_combine(reduction, prefix);
  if (final) return true;
  cursor -= 1;
  return false;
}

// Look-back lanes: what the window before `tile`, read along with the tile's loads, already
// shows: the newest INCLUSIVE tile in it and the READY tiles after it, up to the first that
// was not ready (to be read again after the scan). Everything up to tile `end` (NO_TILE:
// nothing) reduces to `reduction`; kept in shared memory too, for the look-backs after
// fallbacks.
void note_early_window(uint tile, TILE_WORD word, out uint end, out TILE_VALUE reduction) {
  const uint state = tile_state(word);
  const TILE_VALUE value = tile_value(word);
  const uint inclusive = first_slot_in(state, GS_STATE_INCLUSIVE);
  end = NO_TILE;
  reduction = tile_identity();
  if (inclusive < WINDOW) {
    const uint not_ready = last_slot_in(state, GS_STATE_NOT_READY, inclusive);
    const uint first = not_ready == WINDOW ? 0 : not_ready + 1;
    reduction = reduce_window(value, first, inclusive + 1);
    end = tile - 1 - first;
  }
  if (sg_lane() == 0) {
    wg_early_end = end;
    wg_early_value = reduction;
  }
}

void add_statistics() {
  if (spin_count != 0) atomicAdd(control[GS_CONTROL_SPINS], spin_count);
  if (step_count != 0) atomicAdd(control[GS_CONTROL_LOOKBACK_STEPS], step_count);
  if (fallback_count != 0) atomicAdd(control[GS_CONTROL_FALLBACKS], fallback_count);
  if (insertion_count != 0) atomicAdd(control[GS_CONTROL_INSERTIONS], insertion_count);
}

// The run after this one finds its half of the spine and its starvation mark clear
// (docs/protocol.md, "Reset between runs").
void clear_for_next_run() {
  clear_other_half();
  if (FALLBACK && linear_workgroup_id() == 0 && gl_LocalInvocationIndex == 0) {
    clear_next_run_starved();
  }
}

#endif
