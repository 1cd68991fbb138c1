// Thread -> subgroup -> workgroup: the local scan of one tile, and its reduction.
//
// The owner of a tile and a fallback that reduces the same tile both call
// tile_local_scan, so they get the same bits: the split tile-state words of two posts of
// one tile can then never mix two values. For floats both combine the same elements in the
// same order; integers are exact in any order.
#ifndef GPUSCAN_TILE_SCAN_GLSL
#define GPUSCAN_TILE_SCAN_GLSL

#include "interface.h"
#include "types.glsl"
#include "tile_shape.glsl"
#include "monoid.glsl"
#include "subgroup_scan.glsl"
#include "workgroup_scan.glsl"
#include "tile_io.glsl"

// The owned tile's vectors, scanned up to the subgroup block, kept for the write phase.
TV tile_vectors[VECTORS_PER_THREAD];

// Thread level: sequential inclusive scan of one vector; its last element; the vector
// shifted up by one element, `before` entering at the bottom.
#if VECTOR_ELEMENTS == 4
TV thread_scan(TV v) {
  v.y = combine(v.x, v.y);
  v.z = combine(v.y, v.z);
  v.w = combine(v.z, v.w);
  return v;
}
T vector_last(TV v) { return v.w; }
TV shift_in(T before, TV v) { return TV(before, v.x, v.y, v.z); }
#else
TV thread_scan(TV v) {
  v.y = combine(v.x, v.y);
  return v;
}
T vector_last(TV v) { return v.y; }
TV shift_in(T before, TV v) { return TV(before, v.x); }
#endif

// Scans each subgroup's block of a tile's `loaded` vectors (in place), and the block
// totals across the workgroup into partial slot `slot`. For SLOT_OWN the scanned vectors
// are kept for store_tile. Returns the tile's reduction (uniform across the workgroup).
T scan_loaded(inout TV loaded[VECTORS_PER_THREAD], uint slot) {
  T carry = identity();
  if (T_IS_FLOAT == 0 && slot == SLOT_FALLBACK) {
    // A fallback needs the reduction only. Integer operators are associative and
    // commutative, so any order gives the owner's bits: each thread reduces its rows, and
    // the subgroup scans once instead of once per row.
    T total = identity();
    UNROLL_IF_64BIT for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
      total = combine(total, vector_last(thread_scan(loaded[k])));
    }
    carry = sg_inclusive_scan(total);  // the block's total in the last lane, which posts it
  } else {
    // Row k of the subgroup's block: the lanes' vectors k, scanned across the lanes, all
    // rows at once; then the rows one after another from the carry.
    T rows[VECTORS_PER_THREAD];
    UNROLL_IF_64BIT for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
      loaded[k] = thread_scan(loaded[k]);
      rows[k] = vector_last(loaded[k]);
    }
    sg_inclusive_scan_each(rows);
    UNROLL_IF_64BIT for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
      const T prefix = combine(carry, sg_shift_up(rows[k]));
      carry = combine(carry, sg_last(rows[k]));
      if (slot == SLOT_OWN) tile_vectors[k] = combine(prefix, loaded[k]);
    }
  }
  if (sg_lane() == SUBGROUP_SIZE - 1) wg_partials[slot * SUBGROUPS + sg_id()] = carry;
  wg_scan_partials(slot);
  return wg_partials[slot * SUBGROUPS + SUBGROUPS - 1];
}

// Loads `tile` and scans it (scan_loaded).
T tile_local_scan(uint tile, uint slot) {
  TV loaded[VECTORS_PER_THREAD];
  load_thread_vectors(tile, loaded);
  return scan_loaded(loaded, slot);
}

// Writes the owned tile, whose predecessors reduce to `tile_prefix`: its inclusive or
// exclusive scan, or for a reduction the last tile's running total as the one output.
void store_tile(uint tile, T tile_prefix) {
  const uint s = sg_id();
  const T prefix =
      s == 0 ? tile_prefix : combine(tile_prefix, wg_partials[SLOT_OWN * SUBGROUPS + s - 1]);
  if (KIND == GS_KIND_REDUCE) {
    if (tile == pc.tile_count - 1 && gl_LocalInvocationIndex == 0) {
      out_scalars[output_index(0)] =
          combine(tile_prefix, wg_partials[SLOT_OWN * SUBGROUPS + SUBGROUPS - 1]);
    }
    return;
  }
  T before = identity();  // exclusive: the inclusive value of the element before a vector
  const bool full = is_full_tile(tile);
  UNROLL_IF_64BIT for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    const TV v = tile_vectors[k];
    if (KIND == GS_KIND_EXCLUSIVE) {
      const T previous_lane = subgroupShuffleUp(vector_last(v), 1);
      if (sg_lane() != 0) before = previous_lane;
      TV scanned = combine(prefix, shift_in(before, v));
      // The subgroup's first element has nothing before it in the tile: its value is the
      // prefix itself, not the prefix combined with identity(). The two are equal, but
      // NVIDIA's Vulkan driver (580, H100) turned the f32 add identity -0.0 into +0.0 there,
      // so -0.0 + -0.0 came out +0.0 (tests: ScanFloatEdges).
      if (k == 0 && sg_lane() == 0) scanned[0] = prefix;
      store_tile_vector(full, tile_vector_index(tile, k), scanned);
      before = sg_last(vector_last(v));
    } else {
      store_tile_vector(full, tile_vector_index(tile, k), combine(prefix, v));
    }
  }
}

#endif
