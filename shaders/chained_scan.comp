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
layout(constant_id = GS_SPEC_MAX_SPINS) const uint MAX_SPINS = 4;

layout(binding = GS_BINDING_CONTROL, std430) buffer Control { uint control[]; };

const uint LOOKBACK_DONE = 0xFFFFFFFFu;
shared uint wg_tile;
shared uint wg_lookback;  // LOOKBACK_DONE, or the tile the workgroup must reduce
shared T wg_prefix;

T init_value() { return t_from_words(uvec2(pc.init_lo, pc.init_hi)); }
bool is_blocked(uint tile) { return ((tile + 1) & pc.blocking_mask) == 0; }

// Word lanes: walks back from `tile` accumulating into `prefix` until an INCLUSIVE tile
// ends the walk (true) or a tile stays unreadable for MAX_SPINS reads (false).
bool look_back(inout uint tile, inout T prefix) {
  uint spins = 0;
  for (;;) {
    const uint word = read_tile_word(tile);
    const uint state = agreed_state(word);
    if (state != GS_STATE_NOT_READY) {
      prefix = combine(join_pieces(word), prefix);
      if (state == GS_STATE_INCLUSIVE) return true;
      tile -= 1;  // tile 0 is never READY, so this stays in range
      spins = 0;
    } else if (FALLBACK && ++spins >= MAX_SPINS) {
      return false;
    }
  }
}

// Word lanes: offers the fallback's `reduction` of `tile` and continues from what was
// there. Returns true when the prefix is complete.
bool insert_fallback(inout uint tile, inout T prefix, T reduction) {
  const uint before = post_tile(tile, tile == 0 ? GS_STATE_INCLUSIVE : GS_STATE_READY, reduction);
  if (agreed_state(before) == GS_STATE_INCLUSIVE) {
    prefix = combine(join_pieces(before), prefix);
    return true;
  }
  prefix = combine(reduction, prefix);
  if (tile == 0) return true;
  tile -= 1;
  return false;
}

void main() {
  if (gl_LocalInvocationIndex == 0) wg_tile = atomicAdd(control[GS_CONTROL_TILE_COUNTER], 1);
  barrier();
  const uint tile = wg_tile;
  if (tile >= pc.tile_count) return;

  T aggregate = tile_local_scan(tile, SLOT_OWN);
  // The init value belongs to tile 0, for its owner and for any fallback on it alike.
  if (tile == 0) aggregate = combine(init_value(), aggregate);

  // Word-lane state, kept across fallback rounds: the tile being looked at and the
  // prefix gathered so far.
  uint cursor = tile - 1;
  T prefix = identity();
  bool done = tile == 0;
  if (is_word_lane()) {
    if (tile == 0) {
      post_tile(tile, GS_STATE_INCLUSIVE, aggregate);
    } else if (!is_blocked(tile)) {
      post_tile(tile, GS_STATE_READY, aggregate);
    }
  }
  for (;;) {
    if (is_word_lane() && gl_SubgroupInvocationID == 0 && done) wg_lookback = LOOKBACK_DONE;
    if (is_word_lane() && !done) {
      done = look_back(cursor, prefix);
      if (gl_SubgroupInvocationID == 0) wg_lookback = done ? LOOKBACK_DONE : cursor;
    }
    barrier();
    const uint target = wg_lookback;
    if (target == LOOKBACK_DONE) break;
    T reduction = tile_local_scan(target, SLOT_FALLBACK);
    if (target == 0) reduction = combine(init_value(), reduction);
    if (is_word_lane()) done = insert_fallback(cursor, prefix, reduction);
  }

  if (is_word_lane()) {
    if (tile != 0) post_tile(tile, GS_STATE_INCLUSIVE, combine(prefix, aggregate));
    if (gl_SubgroupInvocationID == 0) wg_prefix = tile == 0 ? init_value() : prefix;
  }
  barrier();
  store_tile(tile, wg_prefix);
}
