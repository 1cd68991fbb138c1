// Workgroup level: inclusive scan of the per-subgroup totals in shared memory.
//
// A radix-SUBGROUP_SIZE Ladner-Fischer network: the up-sweep scans groups of
// SUBGROUP_SIZE entries with subgroup scans at strides 1, S, S^2, ...; the down-sweep adds
// each group's finished predecessor into the entries below the top level. It works for
// every power-of-two subgroup size and any number of subgroups, with one barrier per level.
#ifndef GPUSCAN_WORKGROUP_SCAN_GLSL
#define GPUSCAN_WORKGROUP_SCAN_GLSL

#include "types.glsl"
#include "tile_shape.glsl"
#include "monoid.glsl"
#include "subgroup_scan.glsl"

// Two slots of SUBGROUPS entries: the tile's own scan, and a fallback's reduction of a
// predecessor tile, which must not disturb the first.
#define SLOT_OWN 0
#define SLOT_FALLBACK 1
shared T wg_partials[2 * SUBGROUPS];

// Scans wg_partials[slot * SUBGROUPS ..][0 .. SUBGROUPS) in place. Call from uniform control
// flow after the totals are written; on return all threads see the result.
void wg_scan_partials(uint slot) {
  const uint base = slot * SUBGROUPS;
  const uint t = flat_thread_id();
  barrier();
  uint stride = 1;
  for (; stride < SUBGROUPS; stride *= SUBGROUP_SIZE) {
    const uint count = SUBGROUPS / stride;
    const uint at = base + (t + 1) * stride - 1;
    T x = t < count ? wg_partials[at] : identity();
    x = sg_inclusive_scan(x);
    if (t < count) wg_partials[at] = x;
    barrier();
  }
  // Down-sweep: stride is now the step of the top level; finish each level below it.
  for (stride /= SUBGROUP_SIZE; stride > 1; stride /= SUBGROUP_SIZE) {
    const uint below = stride / SUBGROUP_SIZE;
    const uint entry = t + 1;  // 1-based position among the entries of the level below
    if (entry <= SUBGROUPS / below && entry % SUBGROUP_SIZE != 0 && entry > SUBGROUP_SIZE) {
      const uint prefix_at = base + (entry / SUBGROUP_SIZE) * stride - 1;
      const uint at = base + entry * below - 1;
      wg_partials[at] = combine(wg_partials[prefix_at], wg_partials[at]);
    }
    barrier();
  }
}

#endif
