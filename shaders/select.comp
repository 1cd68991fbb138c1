#version 460
#pragma use_vulkan_memory_model
// The compaction family in one pass (DESIGN 3e): select-if, select-flagged and unique keep
// some elements of x, in order, and write how many; partition (by predicate or by flags)
// also writes the others, in order, to a second output, run-length encoding unique's elements
// and each run's length.
// A tile's aggregate is its count of kept elements (and run-length encoding's last head);
// the chained protocol is the scan's (look_back.glsl: decoupled fallback
// with FALLBACK, decoupled look-back without), and a fallback counts a stalled tile's kept
// elements from its input (compaction.glsl's select_tile, the owner's own code). In place
// (output over input), in_place.glsl's protocol runs instead.
#include "common/interface.h"
#include "common/compaction_interface.h"
#include "common/tile_state.h"
#include "common/types.glsl"
#include "common/tile_shape.glsl"
#include "common/monoid.glsl"
#include "common/subgroup_scan.glsl"
#include "common/compaction.glsl"
#include "common/tile_state.glsl"
#include "common/run_control.glsl"
#include "common/look_back.glsl"
#include "common/in_place.glsl"

// Tiles in dispatch order (workgroup id) instead of from the tile counter: csdldf only.
layout(constant_id = GS_SPEC_DISPATCH_ORDER) const bool DISPATCH_ORDER = false;

shared uint wg_tile;
shared uint wg_lookback;  // LOOKBACK_DONE, or the tile the workgroup must count
shared TILE_VALUE wg_prefix;

void main() {
  clear_for_next_run();
  uint tile = linear_workgroup_id();
  if (!DISPATCH_ORDER) {
    if (gl_LocalInvocationIndex == 0) wg_tile = atomicAdd(control[GS_CONTROL_TILE_COUNTER], 1);
    barrier();
    tile = wg_tile;
  }
  if (tile >= pc.tile_count) return;
  if (IN_PLACE) {
    compact_in_place(tile);
    return;
  }

  clear_positions();
  TILE_WORD early = TILE_WORD(GS_STATE_NOT_READY);
  if (is_lookback_lane() && tile != 0) early = read_window(tile - 1, 0);
  const TILE_VALUE kept = tile_aggregate(SLOT_OWN, select_tile(tile, SLOT_OWN));
  stage_kept(tile);

  uint early_end = NO_TILE;
  TILE_VALUE early_value = tile_identity();
  uint cursor = tile - 1;
  TILE_VALUE prefix = tile_identity();
  bool done = tile == 0;
  if (is_lookback_lane()) {
    if (tile == 0) {
      post_tile(tile, GS_STATE_INCLUSIVE, kept);
    } else {
      if (!is_blocked(tile)) post_tile(tile, GS_STATE_READY, kept);
      note_early_window(tile, early, early_end, early_value);
      if (STATISTICS) ++step_count;
    }
  }
  for (;;) {
    if (is_lookback_lane()) {
      if (!done) done = look_back(tile, cursor, prefix, early_end, early_value);
      if (done && tile != 0) post_tile(tile, GS_STATE_INCLUSIVE, tile_combine(prefix, kept));
      if (sg_lane() == 0) {
        wg_lookback = done ? LOOKBACK_DONE : cursor;
        wg_prefix = prefix;
      }
    }
    barrier();
    const uint target = wg_lookback;
    if (target == LOOKBACK_DONE) break;
    const TILE_VALUE count = tile_aggregate(SLOT_FALLBACK, select_tile(target, SLOT_FALLBACK));
    if (is_lookback_lane()) {
      done = insert_fallback(cursor, prefix, count, cursor == 0);
      early_end = wg_early_end;
      early_value = wg_early_value;
    }
  }

  if (STATISTICS && is_lookback_lane() && sg_lane() == 0) add_statistics();
  const TILE_VALUE before = wg_prefix;
  // The last tile writes the count, added to what the count buffer holds (zero, or the
  // count of the chunks before this run). Before the elements: on lavapipe, a count written
  // after partition's writes of the rejected elements was lost (read back as the fill's zero)
  // whenever the last tile was partial and held more than one element; the cause is not
  // understood yet.
  add_run_count(tile, before, kept);
  // The loop's barriers made the staged elements visible. The counts within the chunk stay
  // below 2^32 (CompactionKernels::max_elements); the chunk's output base is 64-bit in the
  // wide build (compaction.glsl's chunk_base).
  if (RLE) {
    write_runs(tile, before, count_of(kept));
  } else {
    write_staged(tile, count_of(before), count_of(kept));
  }
}
