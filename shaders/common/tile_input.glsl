// Thread level, input side, the same for the scans (tile_io.glsl) and the compaction kernels
// (compaction.glsl): the input as 16-byte vectors and as elements (bindings 0 and 1 for the
// scans; the compaction kernels read both through binding 0, compaction_interface.h), and
// which vector of a tile each thread holds.
#ifndef GPUSCAN_TILE_INPUT_GLSL
#define GPUSCAN_TILE_INPUT_GLSL

#include "interface.h"
#include "types.glsl"
#include "tile_shape.glsl"
#include "subgroup_scan.glsl"

layout(binding = GS_BINDING_INPUT_VECTORS, std430) readonly buffer InputVectors {
  TV in_vectors[];
};
#ifndef GS_INPUT_SCALARS_BINDING
#define GS_INPUT_SCALARS_BINDING GS_BINDING_INPUT_SCALARS
#endif
layout(binding = GS_INPUT_SCALARS_BINDING, std430) readonly buffer InputScalars {
  T in_scalars[];
};

// Vector k of this thread in `tile`, in subgroup-blocked order: each logical subgroup owns
// a contiguous block of SUBGROUP_SIZE * VECTORS_PER_THREAD vectors, and a row k of it is
// read by consecutive lanes, so every row is one coalesced access (and the elements of a
// block run row by row, lane by lane).
uint tile_vector_index(uint tile, uint k) {
  return tile * TILE_VECTORS + (sg_id() * VECTORS_PER_THREAD + k) * SUBGROUP_SIZE + sg_lane();
}

#endif
