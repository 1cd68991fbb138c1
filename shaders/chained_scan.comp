#version 460
#pragma use_vulkan_memory_model
// Single-pass chained scan. With FALLBACK it is decoupled fallback (csdldf): a look-back
// that waits too long on a tile reduces that tile itself. Without, it is decoupled
// look-back (csdl), which waits as long as it takes and so needs forward progress. The
// look-back is the one docs/protocol.md specifies ("The look-back the kernels run"), as in
// src/cuda/kernels/look_back.cuh; where the two differ, that page says why.
#include "common/interface.h"
#include "common/tile_state.h"
#include "common/types.glsl"
#include "common/tile_shape.glsl"
#include "common/monoid.glsl"
#include "common/subgroup_scan.glsl"
#include "common/workgroup_scan.glsl"
#include "common/tile_io.glsl"
#include "common/tile_scan.glsl"
#include "common/row_scan.glsl"
#include "common/tile_state.glsl"
#include "common/run_control.glsl"

layout(constant_id = GS_SPEC_FALLBACK) const bool FALLBACK = true;
// Tiles in dispatch order (workgroup id) instead of from the tile counter: csdldf only.
layout(constant_id = GS_SPEC_DISPATCH_ORDER) const bool DISPATCH_ORDER = false;
// Look-back steps without progress after which csdldf falls back, or csdl gives up and
// says so in the control buffer (the host picks a wait far longer than any on a GPU with
// forward progress, and short enough to stay under the loop-iteration limit of CPU
// drivers: llvmpipe ends any shader loop after about 65535 iterations in all, silently,
// so an unbounded spin there would turn a long wait into a wrong prefix).
layout(constant_id = GS_SPEC_MAX_SPINS) const uint MAX_SPINS = 4;

// The statistics variant (a pipeline of its own, so the fast path pays nothing) counts,
// in the look-back lanes, what the look-back did; the workgroup adds them up at the end.
layout(constant_id = GS_SPEC_STATISTICS) const bool STATISTICS = false;
// A batched scan (DESIGN 3f; docs/protocol.md, "Batched scans"): the tile scans segmented
// by rows, a tile holding a row start posts its aggregate as INCLUSIVE (look-backs end
// there), and one whose first element starts a row does not look back. A pipeline of its
// own, so that plain scans pay nothing.
layout(constant_id = GS_SPEC_ROWS) const bool ROWS = false;
uint spin_count = 0;       // steps that found the newest tile not ready
uint step_count = 0;       // look-back steps (LOOKBACK_DEPTH window reads each)
uint fallback_count = 0;   // fallbacks initiated
uint insertion_count = 0;  // fallback insertions into a tile that was NOT_READY

const uint LOOKBACK_DONE = 0xFFFFFFFFu;
const uint NO_TILE = 0xFFFFFFFFu;
shared uint wg_tile;
shared uint wg_lookback;  // LOOKBACK_DONE, or the tile the workgroup must reduce
shared T wg_prefix;
// What the window read while the tile was scanned showed (note_early_window).
shared uint wg_early_end;
shared T wg_early_value;

T init_value() { return t_from_words(uvec2(pc.init_lo, pc.init_hi)); }
// What precedes element 0: the init value, or in a batched run that continues a row, the
// rest of that row.
T lead_value() { return ROWS ? t_from_words(uvec2(pc.lead_lo, pc.lead_hi)) : init_value(); }
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
bool look_back(uint tile, inout uint cursor, inout T prefix, uint early_end, T early_value) {
  if (cursor == early_end) {
    prefix = combine(early_value, prefix);
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
      T value = tile_value(words[depth]);
      const uint back = depth * WINDOW + window_slot();
      if (early_end != NO_TILE && back <= cursor && cursor - back == early_end) {
        state = GS_STATE_INCLUSIVE;
        value = early_value;
      }
      const uint not_ready = first_slot_in(state, GS_STATE_NOT_READY);
      const uint inclusive = first_slot_in(state, GS_STATE_INCLUSIVE);
      if (inclusive < not_ready) {
        prefix = combine(reduce_window(value, 0, inclusive + 1), prefix);
        return true;
      }
      // Slots before tile 0 read NOT_READY, and tile 0 is never READY: cursor stays >= 0.
      prefix = combine(reduce_window(value, 0, not_ready), prefix);
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

// Look-back lanes: offers the fallback's `reduction` of `cursor` and continues from what
// was there. Returns true when the prefix is complete. `final`: the reduction is the tile's
// inclusive value (tile 0, or in a batched scan a tile that holds a row start).
bool insert_fallback(inout uint cursor, inout T prefix, T reduction, bool final) {
  const TILE_WORD before =
      post_tile(cursor, final ? GS_STATE_INCLUSIVE : GS_STATE_READY, reduction);
  const bool was_posted = state_of(before) != GS_STATE_NOT_READY;
  const bool inserted = subgroupBallotBitCount(subgroupBallot(was_posted)) == 0;
  if (STATISTICS) {
    ++fallback_count;
    if (inserted) ++insertion_count;
  }
  if (inserted && !starved) {
    starved = true;
    if (sg_lane() == 0) mark_starved();
  }
  const uint state = subgroupBroadcast(tile_state(before), 0);
  const T value = subgroupBroadcast(tile_value(before), 0);
  if (state == GS_STATE_INCLUSIVE) {
    prefix = combine(value, prefix);
    return true;
  }
  prefix = combine(reduction, prefix);
  if (final) return true;
  cursor -= 1;
  return false;
}

// When the look-back lanes take in the early window (docs/protocol.md, "The early window").
// 32-bit types: after posting the tile's aggregate, so that the post goes out as early as
// without an early window; the window's word waits in registers through the scan. 64-bit
// types: once the tile's loads are issued, so that their two-word tile word is not held
// through the scan. That form measured u64 3% faster on an H100 and 7% on an H200 in one
// comparison, which later ones did not reproduce: as it stands, u64 gains 0.5-1% from the
// early window, as much as with noting after the post (docs/protocol.md, "Where the
// backends differ"). Only when the noting happens differs, never what is noted.
const bool NOTE_EARLY_WINDOW_BEFORE_SCAN = T_WORDS == 2;

// Look-back lanes: what the window before `tile`, read along with the tile's loads, already
// shows: the newest INCLUSIVE tile in it and the READY tiles after it, up to the first that
// was not ready (to be read again after the scan). Everything up to tile `end` (NO_TILE:
// nothing) reduces to `reduction`; kept in shared memory too, for the look-backs after
// fallbacks.
void note_early_window(uint tile, TILE_WORD word, out uint end, out T reduction) {
  const uint state = tile_state(word);
  const T value = tile_value(word);
  const uint inclusive = first_slot_in(state, GS_STATE_INCLUSIVE);
  end = NO_TILE;
  reduction = identity();
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

void main() {
  clear_for_next_run();
  uint tile = linear_workgroup_id();
  if (!DISPATCH_ORDER) {
    if (gl_LocalInvocationIndex == 0) wg_tile = atomicAdd(control[GS_CONTROL_TILE_COUNTER], 1);
    barrier();
    tile = wg_tile;
  }
  if (tile >= pc.tile_count) return;

  // The look-back lanes read the window before the tile while it loads and is scanned:
  // what that already shows (older tiles that have posted) need not be read after the scan.
  TILE_WORD early = TILE_WORD(GS_STATE_NOT_READY);
  if (is_lookback_lane() && tile != 0) early = read_window(tile - 1, 0);
  TV loaded[VECTORS_PER_THREAD];
  load_thread_vectors(tile, loaded);
  uint early_end = NO_TILE;
  T early_value = identity();
  const bool take_early_now = NOTE_EARLY_WINDOW_BEFORE_SCAN && is_lookback_lane() && tile != 0;
  if (take_early_now) note_early_window(tile, early, early_end, early_value);
  bool starts = false;  // whether a row starts in the tile (batched scans)
  T aggregate = ROWS ? scan_loaded_rows(loaded, SLOT_OWN, tile, init_value(), starts)
                     : scan_loaded(loaded, SLOT_OWN);
  // The lead belongs to tile 0 (up to its first row start), for its owner and for any
  // fallback on it alike.
  if (tile == 0 && !starts) aggregate = combine(lead_value(), aggregate);

  // Look-back state, kept across fallback rounds: the tile being looked at and the prefix
  // gathered so far.
  uint cursor = tile - 1;
  T prefix = identity();
  bool done = tile == 0 || (ROWS && row_distance(tile * TILE_ELEMENTS) == 0);
  if (is_lookback_lane()) {
    if (tile == 0) {
      post_tile(tile, GS_STATE_INCLUSIVE, aggregate);
    } else {
      if (!is_blocked(tile)) {
        post_tile(tile, starts ? GS_STATE_INCLUSIVE : GS_STATE_READY, aggregate);
      }
      if (take_early_now) {
        early_end = wg_early_end;  // as noted before the scan
        early_value = wg_early_value;
      } else {
        note_early_window(tile, early, early_end, early_value);
      }
      if (STATISTICS) ++step_count;
    }
  }
  for (;;) {
    // The look-back lanes' next step: walk on, and once the prefix is complete post the
    // tile's inclusive value at once; then tell the workgroup what to do (LOOKBACK_DONE, or
    // the tile to reduce for a fallback) and what precedes the tile.
    if (is_lookback_lane()) {
      if (!done) done = look_back(tile, cursor, prefix, early_end, early_value);
      if (done && tile != 0) {
        post_tile(tile, GS_STATE_INCLUSIVE, starts ? aggregate : combine(prefix, aggregate));
      }
      if (sg_lane() == 0) {
        wg_lookback = done ? LOOKBACK_DONE : cursor;
        wg_prefix = tile == 0 ? lead_value() : prefix;
      }
    }
    barrier();
    const uint target = wg_lookback;
    if (target == LOOKBACK_DONE) break;
    bool target_starts = false;
    T reduction = ROWS ? tile_local_scan_rows(target, SLOT_FALLBACK, init_value(), target_starts)
                       : tile_local_scan(target, SLOT_FALLBACK);
    if (target == 0 && !target_starts) reduction = combine(lead_value(), reduction);
    if (is_lookback_lane()) {
      done = insert_fallback(cursor, prefix, reduction, target == 0 || target_starts);
      // From shared memory, so that no register holds them through the fallback's scan.
      early_end = wg_early_end;
      early_value = wg_early_value;
    }
  }

  if (STATISTICS && is_lookback_lane() && sg_lane() == 0) add_statistics();
  if (ROWS) {
    store_tile_rows(tile, wg_prefix, init_value());
  } else {
    store_tile(tile, wg_prefix);
  }
}
