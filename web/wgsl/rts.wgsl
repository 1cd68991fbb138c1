// Reduce-then-scan, the classic three-dispatch scan (3n traffic): reduce every tile, scan
// the tile reductions in one workgroup, then scan every tile again from its prefix. One
// source; PHASE picks the dispatch (GS_RTS_* in shaders/common/interface.h).
//!import "common/tile_scan.wgsl"
//!import "common/tile_state.wgsl"

@group(0) @binding(GS_BINDING_SPINE_VALUES) var<storage, read_write> spine_values: array<T>;

// One workgroup scans the tile reductions in place (exclusive, starting from the init
// value), WORKGROUP_SIZE runs of SPINE_RUN at a time, and leaves the total as the chunk's
// carry.
const SPINE_RUN: u32 = 16u;
fn scan_spine() {
  var carry = init_value();
  for (var base = 0u; base < P.tile_count; base += WORKGROUP_SIZE * SPINE_RUN) {
    let first = base + LID * SPINE_RUN;
    let end = min(first + SPINE_RUN, P.tile_count);
    var total = identity();
    for (var i = first; i < end; i++) {
      total = combine(total, spine_values[i]);
    }
    wg_inclusive_scan(total);
    var prefix = carry;
    if (LID > 0u) {
      prefix = combine(carry, wg_values[LID - 1u]);
    }
    for (var i = first; i < end; i++) {
      let x = spine_values[i];
      spine_values[i] = prefix;
      prefix = combine(prefix, x);
    }
    carry = combine(carry, wg_values[WORKGROUP_SIZE - 1u]);
    workgroupBarrier();
  }
  if (LID == 0u) {
    atomicStore(&control[control_word(WEB_CONTROL_CARRY)], t_bits(carry));
  }
}

@compute @workgroup_size(WORKGROUP_SIZE)
// The workgroup id comes apart from the Invocation struct: WGSL's uniformity analysis takes
// a struct parameter as a whole, and its lane ids are not uniform.
fn main(invocation: Invocation, @builtin(workgroup_id) wid: vec3<u32>) {
  if (!begin_invocation(invocation)) {
    atomicOr(&control[control_word(WEB_CONTROL_LAYOUT_ERROR)], 1u);
  }
  if (PHASE == GS_RTS_SPINE) {
    scan_spine();
    return;
  }
  let tile = linear_workgroup_id(wid);
  if (tile >= P.tile_count) {
    return;
  }
  let aggregate = tile_local_scan(tile, SLOT_OWN);
  if (PHASE == GS_RTS_REDUCE) {
    if (LID == 0u) {
      spine_values[tile] = aggregate;
    }
  } else {
    store_tile(tile, spine_values[tile]);
  }
}
