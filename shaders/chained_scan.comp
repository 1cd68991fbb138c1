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
// Row-aligned tiles (aligned_tiles.glsl) are SPIR-V modules of their own
// (chained_scan_aligned*, GS_ALIGNED_ROWS=1), as CUDA's are a translation unit of their
// own: compiled out, the plain and batched modules are exactly the SPIR-V they were, so the
// driver's code for them cannot move (it does move with changes that leave their paths
// alone: docs/performance.md, B16).
#ifndef GS_ALIGNED_ROWS
#define GS_ALIGNED_ROWS 0
#endif
#if GS_ALIGNED_ROWS
#include "common/aligned_tiles.glsl"
#endif
#include "common/tile_state.glsl"
#include "common/run_control.glsl"
#include "common/look_back.glsl"

// Tiles in dispatch order (workgroup id) instead of from the tile counter: csdldf only.
layout(constant_id = GS_SPEC_DISPATCH_ORDER) const bool DISPATCH_ORDER = false;
// A batched scan (DESIGN 3f; docs/protocol.md, "Batched scans"): the tile scans segmented
// by rows, a tile holding a row start posts its aggregate as INCLUSIVE (look-backs end
// there), and one whose first element starts a row does not look back. A pipeline of its
// own, so that plain scans pay nothing. With SEGMENTS (row_scan.glsl) the rows are segments
// whose starts are read from a list. Rows of whole tiles take the ALIGNED_ROWS modules
// instead (aligned_tiles.glsl), with ROWS off: plain tiles, a row's first one posting
// INCLUSIVE.
layout(constant_id = GS_SPEC_ROWS) const bool ROWS = false;

shared uint wg_tile;
shared uint wg_lookback;  // LOOKBACK_DONE, or the tile the workgroup must reduce
shared T wg_prefix;

T init_value() { return t_from_words(uvec2(pc.init_lo, pc.init_hi)); }
// What precedes element 0: the init value, or in a batched run that continues a row, the
// rest of that row.
T lead_value() { return ROWS ? t_from_words(uvec2(pc.lead_lo, pc.lead_hi)) : init_value(); }

// When the look-back lanes take in the early window (docs/protocol.md, "The early window").
// 32-bit types: after posting the tile's aggregate, so that the post goes out as early as
// without an early window; the window's word waits in registers through the scan. 64-bit
// types: once the tile's loads are issued, so that their two-word tile word is not held
// through the scan. That form measured u64 3% faster on an H100 and 7% on an H200 in one
// comparison, which later ones did not reproduce: as it stands, u64 gains 0.5-1% from the
// early window, as much as with noting after the post (docs/protocol.md, "Where the
// backends differ"). Only when the noting happens differs, never what is noted.
const bool NOTE_EARLY_WINDOW_BEFORE_SCAN = T_WORDS == 2;

void main() {
  clear_for_next_run();
  uint tile = linear_workgroup_id();
  if (!DISPATCH_ORDER) {
    if (gl_LocalInvocationIndex == 0) wg_tile = atomicAdd(control[GS_CONTROL_TILE_COUNTER], 1);
    barrier();
    tile = wg_tile;
  }
  if (tile >= pc.tile_count) return;
#if GS_ALIGNED_ROWS
  tile = aligned_claimed_tile(tile);
#endif

  // The look-back lanes read the window before the tile while it loads and is scanned:
  // what that already shows (older tiles that have posted) need not be read after the scan.
  TILE_WORD early = TILE_WORD(GS_STATE_NOT_READY);
  if (is_lookback_lane() && tile != 0) early = read_window(tile - 1, 0);
  TV loaded[VECTORS_PER_THREAD];
#if GS_ALIGNED_ROWS
  load_aligned_tile(aligned_tile(tile), loaded);
#else
  load_thread_vectors(tile, loaded);
#endif
  uint early_end = NO_TILE;
  T early_value = identity();
  const bool take_early_now = NOTE_EARLY_WINDOW_BEFORE_SCAN && is_lookback_lane() && tile != 0;
  if (take_early_now) note_early_window(tile, early, early_end, early_value);
  if (ROWS && SEGMENTS) load_segment_bits(tile);
  // Whether a row starts in the tile (batched scans); on row-aligned tiles, at its first
  // element.
#if GS_ALIGNED_ROWS
  bool starts = aligned_tile(tile).row_start;
#else
  bool starts = false;
#endif
  // A batched tile without a row start scans and stores as a plain tile; a reduction's
  // tiles all take the row path, which writes each row's total at the row's end.
  uint last_start;
  const bool row_free = ROWS && KIND != GS_KIND_REDUCE && !last_row_start(tile, last_start);
  T aggregate = !ROWS    ? scan_loaded(loaded, SLOT_OWN)
                : row_free ? scan_loaded_row_free(loaded)
                           : scan_loaded_rows(loaded, tile, init_value(), starts);
  // The lead belongs to tile 0 (up to its first row start), for its owner and for any
  // fallback on it alike.
  if (tile == 0 && !starts) aggregate = combine(lead_value(), aggregate);
#if GS_ALIGNED_ROWS
  // A row-aligned tile that begins its row posts its row's inclusive value so far.
  if (starts) aggregate = combine(init_value(), aggregate);
#endif

  // Look-back state, kept across fallback rounds: the tile being looked at and the prefix
  // gathered so far.
  uint cursor = tile - 1;
  T prefix = identity();
#if GS_ALIGNED_ROWS
  bool done = tile == 0 || starts;
#else
  bool done = tile == 0 || (ROWS && tile_starts_row(tile));
#endif
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
#if GS_ALIGNED_ROWS
        wg_prefix = starts ? init_value() : prefix;  // tile 0 starts its row
#else
        wg_prefix = tile == 0 ? lead_value() : prefix;
#endif
      }
    }
    barrier();
    const uint target = wg_lookback;
    if (target == LOOKBACK_DONE) break;
    bool target_starts = false;
#if GS_ALIGNED_ROWS
    T reduction = aligned_tile_reduce(target, init_value(), target_starts);
#else
    T reduction = ROWS ? tile_reduce_rows(target, init_value(), target_starts)
                       : tile_local_scan(target, SLOT_FALLBACK);
#endif
    if (target == 0 && !target_starts) reduction = combine(lead_value(), reduction);
    if (is_lookback_lane()) {
      done = insert_fallback(cursor, prefix, reduction, target == 0 || target_starts);
      // From shared memory, so that no register holds them through the fallback's scan.
      early_end = wg_early_end;
      early_value = wg_early_value;
    }
  }

  if (STATISTICS && is_lookback_lane() && sg_lane() == 0) add_statistics();
#if GS_ALIGNED_ROWS
  store_aligned_tile(tile, wg_prefix);
#else
  if (ROWS && !row_free) {
    store_tile_rows(tile, wg_prefix, init_value());
  } else {
    store_tile(tile, wg_prefix);
  }
#endif
}
