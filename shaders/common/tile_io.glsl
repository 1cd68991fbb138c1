// Thread level, memory side: the output buffers (the input's are tile_input.glsl's) and the
// masked loads and stores of 16-byte vectors (VECTOR_ELEMENTS elements). Full vectors move
// as one access; the vector that straddles n falls back to element accesses so nothing past
// n is touched.
// With ELEMENT_OFFSETS (data that starts pc.in_shift / pc.out_shift elements into its
// binding, where a 16-byte view cannot reach it) every access is an element access.
#ifndef GPUSCAN_TILE_IO_GLSL
#define GPUSCAN_TILE_IO_GLSL

#include "interface.h"
#include "types.glsl"
#include "tile_shape.glsl"
#include "monoid.glsl"
#include "subgroup_scan.glsl"
#include "tile_input.glsl"

layout(binding = GS_BINDING_OUTPUT_VECTORS, std430) writeonly buffer OutputVectors {
  TV out_vectors[];
};
layout(binding = GS_BINDING_OUTPUT_SCALARS, std430) writeonly buffer OutputScalars {
  T out_scalars[];
};

layout(constant_id = GS_SPEC_ELEMENT_OFFSETS) const bool ELEMENT_OFFSETS = false;

uint input_index(uint i) { return ELEMENT_OFFSETS ? pc.in_shift + i : i; }
uint output_index(uint i) { return ELEMENT_OFFSETS ? pc.out_shift + i : i; }

TV load_vector(uint v) {
  const uint first = VECTOR_ELEMENTS * v;
  if (!ELEMENT_OFFSETS && first + VECTOR_ELEMENTS <= pc.n) return in_vectors[v];
  TV x = TV(identity());
  for (uint c = 0; c < VECTOR_ELEMENTS; ++c) {
    if (first + c < pc.n) x[c] = in_scalars[input_index(first + c)];
  }
  return x;
}

void store_vector(uint v, TV x) {
  const uint first = VECTOR_ELEMENTS * v;
  if (!ELEMENT_OFFSETS && first + VECTOR_ELEMENTS <= pc.n) {
    out_vectors[v] = x;
    return;
  }
  for (uint c = 0; c < VECTOR_ELEMENTS; ++c) {
    if (first + c < pc.n) out_scalars[output_index(first + c)] = x[c];
  }
}

// Whether `tile` lies wholly below n: then its vectors move without per-vector checks,
// in straight-line code that keeps all of a thread's loads in flight at once.
bool is_full_tile(uint tile) { return !ELEMENT_OFFSETS && tile < pc.n / TILE_ELEMENTS; }

void store_tile_vector(bool full, uint v, TV x) {
  if (full) {
    out_vectors[v] = x;
  } else {
    store_vector(v, x);
  }
}

// This thread's vectors of `tile`, all loads issued before any is used.
void load_thread_vectors(uint tile, out TV loaded[VECTORS_PER_THREAD]) {
  if (is_full_tile(tile)) {
    UNROLL_IF_64BIT for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
      loaded[k] = in_vectors[tile_vector_index(tile, k)];
    }
  } else {
    UNROLL_IF_64BIT for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
      loaded[k] = load_vector(tile_vector_index(tile, k));
    }
  }
}

#endif
