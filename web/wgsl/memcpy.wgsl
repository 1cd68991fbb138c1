// The speed-of-light reference: the scan kernels' load and store path with no scan.
//!import "common/tile_io.wgsl"

@compute @workgroup_size(WORKGROUP_SIZE)
// The workgroup id comes apart from the Invocation struct: WGSL's uniformity analysis takes
// a struct parameter as a whole, and its lane ids are not uniform.
fn main(invocation: Invocation, @builtin(workgroup_id) wid: vec3<u32>) {
  begin_invocation(invocation);
  let tile = linear_workgroup_id(wid);
  if (tile >= P.tile_count) {
    return;
  }
  let loaded = load_thread_vectors(tile);
  let full = is_full_tile(tile);
  for (var k = 0u; k < VECTORS_PER_THREAD; k++) {
    store_tile_vector(full, tile_vector_index(tile, k), loaded[k]);
  }
}
