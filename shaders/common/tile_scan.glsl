// Thread -> subgroup -> workgroup: the local scan of one tile, and its reduction.
//
// The owner of a tile and a fallback that reduces the same tile both call
// scan_subgroup_blocks and scan_block_totals, so they combine the same elements in the same
// order and get the same bits: the split tile-state words of two posts of one tile can then
// never mix two values.
#ifndef GPUSCAN_TILE_SCAN_GLSL
#define GPUSCAN_TILE_SCAN_GLSL

// Thread level: sequential inclusive scan of one vector.
TV thread_scan(TV v) {
  v.y = combine(v.x, v.y);
  v.z = combine(v.y, v.z);
  v.w = combine(v.z, v.w);
  return v;
}

// Subgroup level, one row of vectors: returns the exclusive prefix of this lane's vector
// within the subgroup's block and advances the block's running total.
T rake_row(inout T carry, T vector_total) {
  const T inclusive = sg_inclusive_scan(vector_total);
  const T prefix = combine(carry, sg_shift_up(inclusive));
  carry = combine(carry, sg_last(inclusive));
  return prefix;
}

// Tile lanes only, no barrier: loads `tile` and scans each subgroup's block. `scanned`
// receives this thread's vectors scanned up to the block, and each block's total goes to
// partial set `set`.
void scan_subgroup_blocks(uint tile, uint set, out TV scanned[VECTORS_PER_THREAD]) {
  TV loaded[VECTORS_PER_THREAD];
  load_thread_vectors(tile, loaded);
  T carry = identity();
  for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    const TV v = thread_scan(loaded[k]);
    scanned[k] = combine(rake_row(carry, v.w), v);
  }
  if (sg_lane() == SUBGROUP_SIZE - 1) wg_partials[set * SUBGROUPS + sg_id()] = carry;
}

// All threads, uniform control flow: scans the block totals of partial set `set` across
// the workgroup and returns the tile's reduction.
T scan_block_totals(uint set) {
  wg_scan_partials(set);
  return wg_partials[set * SUBGROUPS + SUBGROUPS - 1];
}

// All threads: the local scan of `tile` (scan_subgroup_blocks, then scan_block_totals);
// returns the tile's reduction.
T tile_local_scan(uint tile, uint set, out TV scanned[VECTORS_PER_THREAD]) {
  if (is_tile_lane()) scan_subgroup_blocks(tile, set, scanned);
  return scan_block_totals(set);
}

// Tile lanes: writes `tile`, scanned into `scanned` and partial set `set`, whose
// predecessors reduce to `tile_prefix`: its inclusive or exclusive scan, or for a
// reduction the last tile's running total as the one output.
void store_tile(uint tile, uint set, TV scanned[VECTORS_PER_THREAD], T tile_prefix) {
  const uint s = sg_id();
  const uint base = set * SUBGROUPS;
  const T prefix = s == 0 ? tile_prefix : combine(tile_prefix, wg_partials[base + s - 1]);
  if (KIND == GS_KIND_REDUCE) {
    if (tile == pc.tile_count - 1 && flat_thread_id() == 0) {
      out_scalars[0] = combine(tile_prefix, wg_partials[base + SUBGROUPS - 1]);
    }
    return;
  }
  T before = identity();  // exclusive: the inclusive value of the element before a vector
  const bool full = is_full_tile(tile);
  for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    const TV v = scanned[k];
    if (KIND == GS_KIND_EXCLUSIVE) {
      const T previous_lane = subgroupShuffleUp(v.w, 1);
      if (sg_lane() != 0) before = previous_lane;
      store_tile_vector(full, tile_vector_index(tile, k), combine(prefix, TV(before, v.x, v.y, v.z)));
      before = sg_last(v.w);
    } else {
      store_tile_vector(full, tile_vector_index(tile, k), combine(prefix, v));
    }
  }
}

#endif
