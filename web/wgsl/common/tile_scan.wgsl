// Thread -> subgroup -> workgroup: the local scan of one tile, and its reduction.
//
// The owner of a tile and a fallback that reduces the same tile both call tile_local_scan,
// so they get the same bits: the split tile-state words of two posts of one tile can then
// never mix two values (docs/protocol.md, I2). For floats both combine the same elements in
// the same order; integers are exact in any order.
//!import "common/tile_io.wgsl"
//!import "common/workgroup_scan.wgsl"

// The owned tile, scanned up to its subgroup's block, kept for store_tile; for exclusive
// scans also what precedes each vector within that block.
var<private> tile_vectors: array<TV, VECTORS_PER_THREAD>;
var<private> tile_before: array<T, VECTORS_PER_THREAD>;
var<private> own_subgroup_prefix: T;  // the totals of the subgroups before this one
var<private> own_total: T;

fn thread_scan(v: TV) -> TV {
  var r = v;
  r.y = combine(r.x, r.y);
  r.z = combine(r.y, r.z);
  r.w = combine(r.z, r.w);
  return r;
}
fn combine_vector(a: T, v: TV) -> TV {
  return TV(combine(a, v.x), combine(a, v.y), combine(a, v.z), combine(a, v.w));
}

// Scans the loaded vectors: each thread's vectors serially, row k across the lanes, the
// rows one after another from a carry, and the subgroups' totals across the workgroup in
// slot `slot`. Returns the tile's total (uniform across the workgroup).
fn scan_loaded(loaded: ptr<function, array<TV, VECTORS_PER_THREAD>>, slot: u32) -> T {
  if (!T_IS_FLOAT && slot == SLOT_FALLBACK) {
    // A fallback needs the reduction only. Integer operators are associative and
    // commutative, so any order gives the owner's bits (I2): each thread reduces its
    // vectors, and the lanes join once instead of scanning every row (as shaders/common/
    // tile_scan.glsl does; docs/performance.md W9).
    var total = identity();
    for (var k = 0u; k < VECTORS_PER_THREAD; k++) {
      total = combine(total, thread_scan((*loaded)[k]).w);
    }
    return wg_join_subgroups(slot, lanes_reduce_commutative(total)).total;
  }
  var rows: array<T, VECTORS_PER_THREAD>;
  for (var k = 0u; k < VECTORS_PER_THREAD; k++) {
    (*loaded)[k] = thread_scan((*loaded)[k]);
    rows[k] = (*loaded)[k].w;
  }
  lanes_scan_rows(&rows);
  var carry = identity();
  for (var k = 0u; k < VECTORS_PER_THREAD; k++) {
    let before = combine(carry, lanes_row_prefix(&rows, k));
    carry = combine(carry, lanes_row_total(&rows, k));
    if (slot == SLOT_OWN) {
      tile_vectors[k] = combine_vector(before, (*loaded)[k]);
      if (KIND == GS_KIND_EXCLUSIVE) {
        tile_before[k] = before;
      }
    }
  }
  let joined = wg_join_subgroups(slot, carry);
  if (slot == SLOT_OWN) {
    own_subgroup_prefix = joined.before;
    own_total = joined.total;
  }
  return joined.total;
}

// Loads `tile` and scans it.
fn tile_local_scan(tile: u32, slot: u32) -> T {
  var loaded = load_thread_vectors(tile);
  return scan_loaded(&loaded, slot);
}

// While the workgroup reduces other tiles for fallbacks, the owned tile's scanned vectors
// wait where its results will go, so that the fallback path does not hold them in registers
// beside the fallback tile's loads: the driver sizes its register allocation for the whole
// kernel by its busiest path, and with both tiles live an H100 took more than 48 registers
// and spilled even at 4 vectors a thread, four workgroups an SM instead of five
// (docs/performance.md, WebGPU rows W30-W32). Each invocation reads back only what it
// wrote itself. An exclusive scan keeps tile_before in registers;
// a reduction keeps nothing but its total.
fn stash_tile_in_output(tile: u32) {
  let full = is_full_tile(tile);
  for (var k = 0u; k < VECTORS_PER_THREAD; k++) {
    store_tile_vector(full, tile_vector_index(tile, k), tile_vectors[k]);
  }
}
fn restore_tile_from_output(tile: u32) {
  let full = is_full_tile(tile);
  for (var k = 0u; k < VECTORS_PER_THREAD; k++) {
    let v = tile_vector_index(tile, k);
    if (full) {
      tile_vectors[k] = out_vectors[v];
    } else {
      tile_vectors[k] = load_vector_of(v, true);
    }
  }
}

// Writes the owned tile, whose predecessors reduce to `tile_prefix`: its inclusive or
// exclusive scan, or for a reduction the last tile's total as the one output (out_tail[0]).
fn store_tile(tile: u32, tile_prefix: T) {
  if (KIND == GS_KIND_REDUCE) {
    if (tile == P.tile_count - 1u && LID == 0u) {
      out_tail[0] = combine(tile_prefix, own_total);
    }
    return;
  }
  let prefix = combine(tile_prefix, own_subgroup_prefix);
  let full = is_full_tile(tile);
  for (var k = 0u; k < VECTORS_PER_THREAD; k++) {
    let v = tile_vectors[k];
    var x = v;
    if (KIND == GS_KIND_EXCLUSIVE) {
      x = TV(tile_before[k], v.x, v.y, v.z);
    }
    var y = combine_vector(prefix, x);
    // The tile's first element has nothing before it in the tile: its exclusive value is the
    // tile's prefix itself, not the prefix combined with identities. They differ for a NaN
    // init value of min and max, which WGSL's min(NaN, +inf) turns into +inf.
    let index = tile_vector_index(tile, k);
    if (KIND == GS_KIND_EXCLUSIVE && index == tile * TILE_VECTORS) {
      y.x = tile_prefix;
    }
    store_tile_vector(full, index, y);
  }
}
