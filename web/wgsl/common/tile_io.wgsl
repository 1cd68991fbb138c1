// Thread level, memory side: the input and output views and the masked loads and stores of
// 16-byte vectors. WebGPU forbids two writable bindings of one buffer, so the scalar views
// of the shaders/common original are the run's tail instead: the last n % 4 elements, which
// the host copies into `in_tail` before the dispatch and out of `out_tail` after it. Nothing
// past n is ever touched.
//!import "common/params.wgsl"

@group(0) @binding(GS_BINDING_INPUT_VECTORS) var<storage, read> in_vectors: array<TV>;
@group(0) @binding(GS_BINDING_INPUT_SCALARS) var<storage, read> in_tail: array<T>;
@group(0) @binding(GS_BINDING_OUTPUT_VECTORS) var<storage, read_write> out_vectors: array<TV>;
@group(0) @binding(GS_BINDING_OUTPUT_SCALARS) var<storage, read_write> out_tail: array<T>;

const TILE_VECTORS: u32 = WORKGROUP_SIZE * VECTORS_PER_THREAD;
const TILE_ELEMENTS: u32 = 4u * TILE_VECTORS;

// Vector v of the input, or with `output` what store_vector wrote there (a fallback's
// stash, common/tile_scan.wgsl); identity past n.
fn load_vector_of(v: u32, output: bool) -> TV {
  if (v < P.n / 4u) {
    if (output) {
      return out_vectors[v];
    }
    return in_vectors[v];
  }
  var x = TV(identity());
  for (var c = 0u; c < 4u; c++) {
    if (4u * v + c < P.n) {
      if (output) {
        x[c] = out_tail[c];
      } else {
        x[c] = in_tail[c];
      }
    }
  }
  return x;
}
fn load_vector(v: u32) -> TV { return load_vector_of(v, false); }

fn store_vector(v: u32, x: TV) {
  if (v < P.n / 4u) {
    out_vectors[v] = x;
    return;
  }
  for (var c = 0u; c < 4u; c++) {
    if (4u * v + c < P.n) {
      out_tail[c] = x[c];
    }
  }
}

// Whether `tile` lies wholly below n: its vectors then move without per-vector checks.
fn is_full_tile(tile: u32) -> bool { return tile < P.n / TILE_ELEMENTS; }

// Vector k of this thread in `tile`, subgroup-blocked: each subgroup owns a contiguous block
// of SG_SIZE * VECTORS_PER_THREAD vectors, and row k of it is read by consecutive lanes.
fn tile_vector_index(tile: u32, k: u32) -> u32 {
  return tile * TILE_VECTORS + (SG_ID * VECTORS_PER_THREAD + k) * SG_SIZE + LANE;
}

// This thread's vectors of `tile`, all loads issued before any is used.
fn load_thread_vectors(tile: u32) -> array<TV, VECTORS_PER_THREAD> {
  var loaded: array<TV, VECTORS_PER_THREAD>;
  if (is_full_tile(tile)) {
    for (var k = 0u; k < VECTORS_PER_THREAD; k++) {
      loaded[k] = in_vectors[tile_vector_index(tile, k)];
    }
  } else {
    for (var k = 0u; k < VECTORS_PER_THREAD; k++) {
      loaded[k] = load_vector(tile_vector_index(tile, k));
    }
  }
  return loaded;
}

fn store_tile_vector(full: bool, v: u32, x: TV) {
  if (full) {
    out_vectors[v] = x;
  } else {
    store_vector(v, x);
  }
}
