#version 460
#pragma use_vulkan_memory_model
// The speed-of-light reference: the scan kernels' load and store path with no scan.
#include "common/types.glsl"
#include "common/tile_shape.glsl"
#include "common/tile_io.glsl"

void main() {
  const uint tile = linear_workgroup_id();
  if (tile >= pc.tile_count) return;
  TV loaded[VECTORS_PER_THREAD];
  load_thread_vectors(tile, loaded);
  const bool full = is_full_tile(tile);
  UNROLL_IF_64BIT for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    store_tile_vector(full, tile_vector_index(tile, k), loaded[k]);
  }
}
