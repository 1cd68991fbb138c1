// Row-aligned tiles of a batched scan (DESIGN 3f; docs/protocol.md, "Row-aligned tiles"):
// a run of whole rows (row_phase 0), each at least four tiles long and a whole number of
// 16-byte vectors, gives each row tiles of its own. Tile t of the run is tile t mod P of
// row t / P, P = ceil(row_length / TILE_ELEMENTS); a row's last tile is part full. The
// tiles load, scan and store as the plain scan's do, with the row in place of the run, so
// the segmented scan of row_scan.glsl is not needed: only a row's first tile holds a row
// start, at its first element. Compiled into SPIR-V modules of their own
// (chained_scan.comp, GS_ALIGNED_ROWS), so that the plain and batched modules stay as they
// were. Mirrors src/cuda/kernels/rows.cuh, AlignedRows.
#ifndef GPUSCAN_ALIGNED_TILES_GLSL
#define GPUSCAN_ALIGNED_TILES_GLSL

#include "interface.h"
#include "types.glsl"
#include "tile_shape.glsl"
#include "monoid.glsl"
#include "subgroup_scan.glsl"
#include "workgroup_scan.glsl"
#include "tile_io.glsl"
#include "tile_scan.glsl"

// Where a row-aligned tile's elements lie: its row, its first vector in the binding, how
// many of its vectors hold data (TILE_VECTORS but in a row's last tile), and whether it
// begins or ends its row.
struct AlignedTile {
  uint row;
  uint first_vector;
  uint vectors;
  bool row_start;
  bool row_end;
};

// Tiles a row takes, P.
uint aligned_tiles_per_row() { return (pc.row_length + TILE_ELEMENTS - 1) / TILE_ELEMENTS; }

// Whether claims go round the rows (docs/protocol.md, "Row-aligned tiles"; the host picks
// it by the run's tile count, core/policy.hpp): tile k of every row before tile k + 1 of
// any, so that the tile a look-back waits on, the one before in its row, was claimed a
// round of rows earlier. The chain, and so the spine, keeps the rows' order either way, and
// every tile's predecessors in its row are claimed before it, as in a plain run.
layout(constant_id = GS_SPEC_ROUND_ROWS) const bool ROUND_ROWS = false;

// The tile that claim `claim` (a workgroup id, or a number from the tile counter) takes.
uint aligned_claimed_tile(uint claim) {
  if (!ROUND_ROWS) return claim;
  const uint per_row = aligned_tiles_per_row();
  const uint rows = pc.tile_count / per_row;
  const uint k = claim / rows;
  return (claim - k * rows) * per_row + k;
}

AlignedTile aligned_tile(uint tile) {
  // The host keeps n below 2^31 and row_length a multiple of VECTOR_ELEMENTS.
  const uint per_row = aligned_tiles_per_row();
  AlignedTile a;
  a.row = tile / per_row;
  const uint t = tile - a.row * per_row;
  const uint first = t * TILE_ELEMENTS;  // within the row
  a.first_vector = (a.row * pc.row_length + first) / VECTOR_ELEMENTS;
  a.vectors = min(TILE_VECTORS, (pc.row_length - first) / VECTOR_ELEMENTS);
  a.row_start = t == 0;
  a.row_end = t == per_row - 1;
  return a;
}

// Vector k of this thread within its tile, in tile_vector_index's order.
uint aligned_vector_offset(uint k) {
  return (sg_id() * VECTORS_PER_THREAD + k) * SUBGROUP_SIZE + sg_lane();
}

// This thread's vectors of the tile, all loads issued before any is used; vectors past the
// row's end read as the identity, which no reduction or scan of the tile notices.
void load_aligned_tile(AlignedTile a, out TV loaded[VECTORS_PER_THREAD]) {
  if (a.vectors == TILE_VECTORS) {
    UNROLL_IF_64BIT for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
      loaded[k] = in_vectors[a.first_vector + aligned_vector_offset(k)];
    }
  } else {
    UNROLL_IF_64BIT for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
      const uint o = aligned_vector_offset(k);
      loaded[k] = o < a.vectors ? in_vectors[a.first_vector + o] : TV(identity());
    }
  }
}

// A fallback's reduction of `tile`, the bits its owner posts (tile_local_scan's order),
// with the init value joined where the tile begins its row.
T aligned_tile_reduce(uint tile, T row_init, out bool row_start) {
  const AlignedTile a = aligned_tile(tile);
  TV loaded[VECTORS_PER_THREAD];
  load_aligned_tile(a, loaded);
  const T reduction = scan_loaded(loaded, SLOT_FALLBACK);
  row_start = a.row_start;
  return a.row_start ? combine(row_init, reduction) : reduction;
}

// What precedes this subgroup's block of the owned tile: `tile_prefix` and the blocks
// before it.
T subgroup_prefix(T tile_prefix) {
  const uint s = sg_id();
  return s == 0 ? tile_prefix : combine(tile_prefix, wg_partials[SLOT_OWN * SUBGROUPS + s - 1]);
}

// This thread's vector k of the owned tile as it is written: its inclusive or exclusive
// scan, given what precedes the subgroup's block (`prefix`), as store_tile writes it (kept
// apart, so that store_tile's module stays as it was). `before` carries, from one vector to
// the next, the inclusive value of the element before the vector (exclusive scans). All
// lanes call it: it shuffles.
TV scanned_vector(uint k, T prefix, inout T before) {
  const TV v = tile_vectors[k];
  if (KIND != GS_KIND_EXCLUSIVE) return combine(prefix, v);
  const T previous_lane = subgroupShuffleUp(vector_last(v), 1);
  if (sg_lane() != 0) before = previous_lane;
  TV scanned = combine(prefix, shift_in(before, v));
  if (k == 0 && sg_lane() == 0) scanned[0] = prefix;  // store_tile says why
  before = sg_last(vector_last(v));
  return scanned;
}

// Writes the owned tile (scanned by scan_loaded into tile_vectors), whose predecessors in
// its row reduce to `tile_prefix` (the init value for a row's first tile): its inclusive or
// exclusive scan, or for a reduction, by the row's last tile, the row's total at output
// out_shift + row (the run's rows start at out_shift, as in row_scan.glsl).
void store_aligned_tile(uint tile, T tile_prefix) {
  const AlignedTile a = aligned_tile(tile);
  if (KIND == GS_KIND_REDUCE) {
    if (a.row_end && gl_LocalInvocationIndex == 0) {
      out_scalars[pc.out_shift + a.row] =
          combine(tile_prefix, wg_partials[SLOT_OWN * SUBGROUPS + SUBGROUPS - 1]);
    }
    return;
  }
  const T prefix = subgroup_prefix(tile_prefix);
  T before = identity();
  const bool full = a.vectors == TILE_VECTORS;
  UNROLL_IF_64BIT for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    const TV scanned = scanned_vector(k, prefix, before);
    const uint o = aligned_vector_offset(k);
    if (full || o < a.vectors) out_vectors[a.first_vector + o] = scanned;
  }
}

#endif
