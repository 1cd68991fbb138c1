// Workgroup level: inclusive scan of the per-subgroup totals in shared memory.
//
// A radix-SUBGROUP_SIZE Ladner-Fischer network: the up-sweep scans groups of
// SUBGROUP_SIZE entries with subgroup scans at strides 1, S, S^2, ...; the down-sweep adds
// each group's finished predecessor into the entries below the top level. It works for
// every power-of-two subgroup size and any number of subgroups, with one barrier per level.
#ifndef GPUSCAN_WORKGROUP_SCAN_GLSL
#define GPUSCAN_WORKGROUP_SCAN_GLSL

// Three sets of SUBGROUPS entries: two for owned tiles, taken by tile parity (the chained
// scan scans its next tile while the current one waits to be stored with its own set), and
// one for a fallback's reduction of a predecessor tile, which must disturb neither.
#define SET_FALLBACK 2
shared T wg_partials[3 * SUBGROUPS];

// Scans wg_partials[set * SUBGROUPS ..][0 .. SUBGROUPS) in place. Call from uniform control
// flow after the totals are written; on return all threads see the result.
void wg_scan_partials(uint set) {
  const uint base = set * SUBGROUPS;
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
