#version 460
#pragma use_vulkan_memory_model
// Reduce-then-scan, the classic three-dispatch scan (3n traffic): reduce every tile, scan
// the tile reductions in one workgroup, then scan every tile again from its prefix. One
// shader; PHASE picks the dispatch.
#include "common/interface.h"
#include "common/types.glsl"
#include "common/tile_shape.glsl"
#include "common/monoid.glsl"
#include "common/subgroup_scan.glsl"
#include "common/workgroup_scan.glsl"
#include "common/tile_scan.glsl"

layout(constant_id = GS_SPEC_PHASE) const uint PHASE = GS_RTS_REDUCE;
layout(binding = GS_BINDING_SPINE_VALUES, std430) buffer SpineValues {
  T spine_values[];
};

// One workgroup scans the tile reductions in place (exclusive, starting from init), a
// block of WORKGROUP_SIZE * VECTORS_PER_THREAD * VECTOR_ELEMENTS at a time: each thread
// walks a short contiguous run serially, and the run totals are scanned across the
// workgroup.
void scan_spine() {
  const uint run = VECTOR_ELEMENTS * VECTORS_PER_THREAD;
  const uint t = flat_thread_id();
  T carry = t_from_words(uvec2(pc.init_lo, pc.init_hi));
  for (uint base = 0; base < pc.tile_count; base += WORKGROUP_SIZE * run) {
    const uint first = base + t * run;
    T total = identity();
    for (uint i = first; i < min(first + run, pc.tile_count); ++i) {
      total = combine(total, spine_values[i]);
    }
    const T inclusive = sg_inclusive_scan(total);
    if (sg_lane() == SUBGROUP_SIZE - 1) wg_partials[sg_id()] = inclusive;
    wg_scan_partials(SLOT_OWN);
    const uint s = sg_id();
    T prefix = combine(carry, sg_shift_up(inclusive));
    if (s > 0) prefix = combine(carry, combine(wg_partials[s - 1], sg_shift_up(inclusive)));
    for (uint i = first; i < min(first + run, pc.tile_count); ++i) {
      const T x = spine_values[i];
      spine_values[i] = prefix;
      prefix = combine(prefix, x);
    }
    carry = combine(carry, wg_partials[SUBGROUPS - 1]);
    barrier();
  }
}

void main() {
  if (PHASE == GS_RTS_SPINE) {
    scan_spine();
    return;
  }
  const uint tile = linear_workgroup_id();
  if (tile >= pc.tile_count) return;
  const T aggregate = tile_local_scan(tile, SLOT_OWN);
  if (PHASE == GS_RTS_REDUCE) {
    if (gl_LocalInvocationIndex == 0) spine_values[tile] = aggregate;
  } else {
    store_tile(tile, spine_values[tile]);
  }
}
