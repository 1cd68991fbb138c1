// Subgroup level, memory side: moves a subgroup's block of the tile between rows (vector k
// of every lane side by side, so each row is one coalesced access) and runs (each lane's
// VECTORS_PER_THREAD vectors contiguous in element order), through shared memory.
//
// Global memory wants rows; the scan wants runs, because then a thread scans its whole run
// serially and the subgroup scans once per tile instead of once per row: for 64-bit types
// the subgroup scans were most of the work of a tile.
#ifndef GPUSCAN_TILE_EXCHANGE_GLSL
#define GPUSCAN_TILE_EXCHANGE_GLSL

#extension GL_KHR_shader_subgroup_basic : require

// A run occupies an odd number of 16-byte slots (one slot of padding when
// VECTORS_PER_THREAD is even), so that the lanes reading their runs side by side hit
// different shared-memory banks.
const uint RUN_STRIDE = VECTORS_PER_THREAD | 1u;
shared TV exchange[WORKGROUP_SIZE * RUN_STRIDE];

// Where vector `p` (in element order) of this subgroup's block lives in `exchange`.
uint exchange_slot(uint p) {
  return sg_id() * SUBGROUP_SIZE * RUN_STRIDE + (p / VECTORS_PER_THREAD) * RUN_STRIDE +
         p % VECTORS_PER_THREAD;
}

// Lanes of a subgroup need not run in step: a lane may write only after the others have
// read, and read only after they have written.
void exchange_barrier() {
  subgroupMemoryBarrierShared();
  subgroupBarrier();
}

// This thread's run of `tile`; vectors past n read as the identity.
void load_thread_run(uint tile, out TV run[VECTORS_PER_THREAD]) {
  TV rows[VECTORS_PER_THREAD];
  load_thread_vectors(tile, rows);
  exchange_barrier();
  for (uint k = 0; k < VECTORS_PER_THREAD; ++k) exchange[exchange_slot(k * SUBGROUP_SIZE + sg_lane())] = rows[k];
  exchange_barrier();
  for (uint k = 0; k < VECTORS_PER_THREAD; ++k) run[k] = exchange[exchange_slot(sg_lane() * VECTORS_PER_THREAD + k)];
}

// Writes this thread's run of `tile` (nothing past n).
void store_thread_run(uint tile, TV run[VECTORS_PER_THREAD]) {
  exchange_barrier();
  for (uint k = 0; k < VECTORS_PER_THREAD; ++k) exchange[exchange_slot(sg_lane() * VECTORS_PER_THREAD + k)] = run[k];
  exchange_barrier();
  const bool full = is_full_tile(tile);
  for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    store_tile_vector(full, tile_vector_index(tile, k), exchange[exchange_slot(k * SUBGROUP_SIZE + sg_lane())]);
  }
}

#endif
