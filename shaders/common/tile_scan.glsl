// Thread -> subgroup -> workgroup: the local scan of one tile, and its reduction.
//
// The owner of a tile and a fallback that reduces the same tile both call
// tile_local_scan, so they combine the same elements in the same order and get the same
// bits: the split tile-state words of two posts of one tile can then never mix two values.
#ifndef GPUSCAN_TILE_SCAN_GLSL
#define GPUSCAN_TILE_SCAN_GLSL

// The owned tile's run (tile_exchange.glsl), scanned up to the subgroup block, kept for the
// write phase.
TV tile_vectors[VECTORS_PER_THREAD];

// Thread level: sequential inclusive scan of this thread's run, in place; returns its total.
T thread_scan(inout TV run[VECTORS_PER_THREAD]) {
  T total = run[0][0];
  for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    for (uint c = k == 0 ? 1 : 0; c < VECTOR_ELEMENTS; ++c) {
      total = combine(total, run[k][c]);
      run[k][c] = total;
    }
  }
  return total;
}

T vector_last(TV v) { return v[VECTOR_ELEMENTS - 1]; }

// The vector shifted up by one element, `before` entering at the bottom.
TV shift_in(T before, TV v) {
  for (uint c = VECTOR_ELEMENTS - 1; c > 0; --c) v[c] = v[c - 1];
  v[0] = before;
  return v;
}

// Loads `tile`, scans each subgroup's block (every thread its run, then one subgroup scan
// of the run totals), and scans the block totals across the workgroup into partial slot
// `slot`. For SLOT_OWN the scanned runs are kept for store_tile. Returns the tile's
// reduction (uniform across the workgroup).
T tile_local_scan(uint tile, uint slot) {
  TV run[VECTORS_PER_THREAD];
  load_thread_run(tile, run);
  const T inclusive = sg_inclusive_scan(thread_scan(run));
  if (slot == SLOT_OWN) {
    const T prefix = sg_shift_up(inclusive);
    for (uint k = 0; k < VECTORS_PER_THREAD; ++k) tile_vectors[k] = combine(prefix, run[k]);
  }
  if (sg_lane() == SUBGROUP_SIZE - 1) wg_partials[slot * SUBGROUPS + sg_id()] = inclusive;
  wg_scan_partials(slot);
  return wg_partials[slot * SUBGROUPS + SUBGROUPS - 1];
}

// Writes the owned tile, whose predecessors reduce to `tile_prefix`: its inclusive or
// exclusive scan, or for a reduction the last tile's running total as the one output.
void store_tile(uint tile, T tile_prefix) {
  const uint s = sg_id();
  const T prefix = s == 0 ? tile_prefix : combine(tile_prefix, wg_partials[SLOT_OWN * SUBGROUPS + s - 1]);
  if (KIND == GS_KIND_REDUCE) {
    if (tile == pc.tile_count - 1 && gl_LocalInvocationIndex == 0) {
      out_scalars[0] = combine(tile_prefix, wg_partials[SLOT_OWN * SUBGROUPS + SUBGROUPS - 1]);
    }
    return;
  }
  TV run[VECTORS_PER_THREAD];
  // Exclusive: each element takes the inclusive value of the one before it, which for the
  // first of a run is the last of the previous lane's run.
  T before = sg_shift_up(vector_last(tile_vectors[VECTORS_PER_THREAD - 1]));
  for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    const TV v = tile_vectors[k];
    run[k] = combine(prefix, KIND == GS_KIND_EXCLUSIVE ? shift_in(before, v) : v);
    before = vector_last(v);
  }
  store_thread_run(tile, run);
}

#endif
