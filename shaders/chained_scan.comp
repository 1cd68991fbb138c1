#version 460
#pragma use_vulkan_memory_model
// Single-pass chained scan. With FALLBACK it is decoupled fallback (csdldf): a look-back
// that waits too long on a tile reduces that tile itself. Without, it is decoupled
// look-back (csdl), which waits as long as it takes and so needs forward progress.
#include "common/prelude.glsl"
#include "common/subgroup_scan.glsl"
#include "common/workgroup_scan.glsl"
#include "common/tile_io.glsl"
#include "common/tile_scan.glsl"
#include "common/tile_state.glsl"

layout(constant_id = GS_SPEC_FALLBACK) const bool FALLBACK = true;
// Tiles in dispatch order (workgroup id) instead of from the tile counter: csdldf only.
layout(constant_id = GS_SPEC_DISPATCH_ORDER) const bool DISPATCH_ORDER = false;
// Look-back steps without progress after which csdldf falls back, or csdl gives up and
// says so in the control buffer (the host picks a wait far longer than any on a GPU with
// forward progress, and short enough to stay under the loop-iteration limit of CPU
// drivers: llvmpipe ends any shader loop after about 65535 iterations in all, silently,
// so an unbounded spin there would turn a long wait into a wrong prefix).
layout(constant_id = GS_SPEC_MAX_SPINS) const uint MAX_SPINS = 4;

layout(binding = GS_BINDING_CONTROL, std430) buffer Control { uint control[]; };

// The statistics variant (a pipeline of its own, so the fast path pays nothing) counts,
// in the look-back lanes, what the look-back did; the workgroup adds them up at the end.
layout(constant_id = GS_SPEC_STATISTICS) const bool STATISTICS = false;
uint spin_count = 0;       // steps that found the newest tile not ready
uint step_count = 0;       // look-back steps (LOOKBACK_DEPTH window reads each)
uint fallback_count = 0;   // fallbacks initiated
uint insertion_count = 0;  // fallback insertions into a tile that was NOT_READY

const uint LOOKBACK_DONE = 0xFFFFFFFFu;
shared uint wg_claimed;   // the workgroup's next tile, claimed by its leader
shared uint wg_lookback;  // LOOKBACK_DONE, or the tile the workgroup must reduce
shared T wg_prefix;

T init_value() { return t_from_words(uvec2(pc.init_lo, pc.init_hi)); }
bool is_blocked(uint tile) { return ((tile + 1) & pc.blocking_mask) == 0; }

// Look-back lanes: walks back from `cursor`, LOOKBACK_DEPTH windows per step,
// accumulating into `prefix`, until an INCLUSIVE tile ends the walk (true), or the newest
// tile not yet taken stays unreadable for MAX_SPINS steps (false: the caller falls back
// on `cursor`). Without FALLBACK, MAX_SPINS steps without progress make it give up and
// report it.
// How many steps a look-back of `tile` waits on the not-ready tile `cursor` before it
// falls back: MAX_SPINS for the nearest successor, longer the further back the blocking
// tile lies (up to 64 times). Every successor of a blocking tile reaches it; if all fell
// back after the same wait, a blocking tile would be reduced dozens of times over, while
// the nearest one's insertion serves them all. Bounded, so progress stays guaranteed.
uint patience(uint tile, uint cursor) { return FALLBACK ? MAX_SPINS * min(tile - cursor, 64u) : MAX_SPINS; }

bool look_back(uint tile, inout uint cursor, inout T prefix) {
  uint spins = 0;
  for (;;) {
    TILE_WORD words[LOOKBACK_DEPTH];
    for (uint depth = 0; depth < LOOKBACK_DEPTH; ++depth) words[depth] = read_window(cursor, depth);
    if (STATISTICS) ++step_count;
    // Take the windows in order while they are all READY; stop at an INCLUSIVE tile (done)
    // or at a tile not ready yet (read again from there).
    bool moved = false;
    for (uint depth = 0; depth < LOOKBACK_DEPTH; ++depth) {
      const uint state = tile_state(words[depth]);
      const T value = tile_value(words[depth]);
      const uint not_ready = first_slot_in(state, GS_STATE_NOT_READY);
      const uint inclusive = first_slot_in(state, GS_STATE_INCLUSIVE);
      if (inclusive < not_ready) {
        prefix = combine(reduce_window(value, inclusive + 1), prefix);
        return true;
      }
      // Slots before tile 0 read NOT_READY, and tile 0 is never READY: cursor stays >= 0.
      prefix = combine(reduce_window(value, not_ready), prefix);
      cursor -= not_ready;
      moved = moved || not_ready > 0;
      if (not_ready < WINDOW) break;
    }
    if (moved) {
      spins = 0;
      continue;
    }
    if (STATISTICS) ++spin_count;
    if (++spins >= patience(tile, cursor)) {
      if (!FALLBACK && sg_lane() == 0) atomicAdd(control[GS_CONTROL_LOOKBACK_ABANDONED], 1);
      return !FALLBACK;
    }
  }
}

// Look-back lanes: offers the fallback's `reduction` of `cursor` and continues from what
// was there. Returns true when the prefix is complete.
bool insert_fallback(inout uint cursor, inout T prefix, T reduction) {
  const TILE_WORD before = post_tile(cursor, cursor == 0 ? GS_STATE_INCLUSIVE : GS_STATE_READY, reduction);
  if (STATISTICS) {
    ++fallback_count;
    const bool was_posted = state_of(before) != GS_STATE_NOT_READY;
    if (subgroupBallotBitCount(subgroupBallot(was_posted)) == 0) ++insertion_count;
  }
  const uint state = subgroupBroadcast(tile_state(before), 0);
  const T value = subgroupBroadcast(tile_value(before), 0);
  if (state == GS_STATE_INCLUSIVE) {
    prefix = combine(value, prefix);
    return true;
  }
  prefix = combine(reduction, prefix);
  if (cursor == 0) return true;
  cursor -= 1;
  return false;
}

void add_statistics() {
  if (spin_count != 0) atomicAdd(control[GS_CONTROL_SPINS], spin_count);
  if (step_count != 0) atomicAdd(control[GS_CONTROL_LOOKBACK_STEPS], step_count);
  if (fallback_count != 0) atomicAdd(control[GS_CONTROL_FALLBACKS], fallback_count);
  if (insertion_count != 0) atomicAdd(control[GS_CONTROL_INSERTIONS], insertion_count);
}

bool is_leader() { return is_lookback_lane() && sg_lane() == 0; }
uint claim_tile() { return atomicAdd(control[GS_CONTROL_TILE_COUNTER], 1); }

// Look-back lanes: offers the aggregate of a freshly scanned tile. Tile 0's includes the
// init value and is its inclusive value at once; a blocked tile posts nothing.
void post_aggregate(uint tile, T aggregate) {
  if (tile == 0) {
    post_tile(tile, GS_STATE_INCLUSIVE, aggregate);
  } else if (!is_blocked(tile)) {
    post_tile(tile, GS_STATE_READY, aggregate);
  }
}

// Look-back lanes: the verdict of a look-back round for all to read after the next barrier.
void publish_verdict(bool done, uint cursor) {
  if (sg_lane() == 0) wg_lookback = done ? LOOKBACK_DONE : cursor;
}

// A workgroup is its tile lanes and one look-back subgroup, and it takes tile after tile
// from the counter (in dispatch order: one tile, its workgroup id). While the look-back
// lanes walk back for a tile, the tile lanes load and scan the next tile's subgroup
// blocks, so that the loads are in flight during the walk; the walk's fallbacks are
// reduced by the tile lanes. Every barrier is workgroup-wide, so the look-back lanes meet
// the tile lanes' barriers and the tile lanes wait at the end of each walk.
void main() {
  uint tile = linear_workgroup_id();
  if (!DISPATCH_ORDER) {
    if (is_leader()) wg_claimed = claim_tile();
    barrier();
    tile = wg_claimed;
  }
  if (tile >= pc.tile_count) return;

  // The owned tile's vectors, scanned up to their subgroup block, and its partial set; the
  // next tile gets the other set.
  TV own[VECTORS_PER_THREAD];
  uint set = 0;
  T aggregate = tile_local_scan(tile, set, own);
  // The init value belongs to tile 0, for its owner and for any fallback on it alike.
  if (tile == 0) aggregate = combine(init_value(), aggregate);
  if (is_lookback_lane()) post_aggregate(tile, aggregate);
  // Claims so far; a workgroup claims at most pc.tiles_per_workgroup tiles (the grid
  // times that covers all tiles), and no more once the counter has run out.
  uint claims = 1;
  uint next = pc.tile_count;
  if (!DISPATCH_ORDER && claims < pc.tiles_per_workgroup) {
    if (is_leader()) wg_claimed = claim_tile();
    barrier();
    next = wg_claimed;
    ++claims;
  }

  for (;;) {
    // Look-back state, kept across fallback rounds: the tile being looked at and the
    // prefix gathered so far. The leader claims the tile after next now and publishes it
    // after the walk, so the claim's round trip overlaps the walk.
    uint cursor = tile - 1;
    T prefix = identity();
    bool done = tile == 0;
    uint claimed = pc.tile_count;
    const bool claiming = next < pc.tile_count && claims < pc.tiles_per_workgroup;
    if (claiming) ++claims;
    if (is_lookback_lane()) {
      if (claiming && sg_lane() == 0) claimed = claim_tile();
      if (!done) done = look_back(tile, cursor, prefix);
      publish_verdict(done, cursor);
    }
    TV upcoming[VECTORS_PER_THREAD];
    if (is_tile_lane() && next < pc.tile_count) scan_subgroup_blocks(next, set ^ 1, upcoming);
    barrier();

    for (;;) {
      const uint target = wg_lookback;
      if (target == LOOKBACK_DONE) break;
      TV unused[VECTORS_PER_THREAD];
      T reduction = tile_local_scan(target, SET_FALLBACK, unused);
      if (target == 0) reduction = combine(init_value(), reduction);
      if (is_lookback_lane()) {
        done = insert_fallback(cursor, prefix, reduction);
        if (!done) done = look_back(tile, cursor, prefix);
        publish_verdict(done, cursor);
      }
      barrier();
    }

    if (is_lookback_lane()) {
      if (tile != 0) post_tile(tile, GS_STATE_INCLUSIVE, combine(prefix, aggregate));
      if (sg_lane() == 0) {
        wg_prefix = tile == 0 ? init_value() : prefix;
        wg_claimed = claimed;
      }
    }
    barrier();
    if (is_tile_lane()) store_tile(tile, set, own, wg_prefix);
    if (next >= pc.tile_count) break;

    set ^= 1;
    aggregate = scan_block_totals(set);
    if (is_lookback_lane()) post_aggregate(next, aggregate);
    tile = next;
    for (uint k = 0; k < VECTORS_PER_THREAD; ++k) own[k] = upcoming[k];
    next = wg_claimed;
  }
  if (STATISTICS && is_leader()) add_statistics();
}
