// Subgroup level, with the `subgroups` feature: the lanes of one hardware subgroup, of
// whatever size the device runs (4 to 128; read at run time, so one pipeline serves every
// size). Scans across lanes use shuffles, so that every operator works. The rest of the
// kernels see only these functions; lanes_emulated.wgsl is the path without the feature.
struct Invocation {
  @builtin(local_invocation_index) lid: u32,
  @builtin(subgroup_size) sg_size: u32,
  @builtin(subgroup_invocation_id) sg_lane: u32,
}

var<private> LID: u32;
var<private> LANE: u32;
var<private> SG_SIZE: u32;
var<private> SG_ID: u32;

// The kernels take subgroup s to be invocations [s * size, (s + 1) * size), as every known
// driver lays them out (WGSL has no subgroup id). Returns whether that holds here; a
// kernel that finds it does not says so in the control buffer and the host raises an error.
fn begin_invocation(inv: Invocation) -> bool {
  LID = inv.lid;
  LANE = inv.sg_lane;
  SG_SIZE = inv.sg_size;
  SG_ID = inv.lid / inv.sg_size;
  let first = subgroupBroadcast(inv.lid, 0u);
  return inv.lid % inv.sg_size == inv.sg_lane && first == inv.lid - inv.sg_lane &&
         WORKGROUP_SIZE % inv.sg_size == 0u && inv.sg_size >= MIN_SUBGROUP_SIZE;
}

// Kogge-Stone inclusive scans of a thread's rows across the lanes, all rows step by step
// together so that their shuffles overlap.
fn lanes_scan_rows(rows: ptr<function, array<T, VECTORS_PER_THREAD>>) {
  for (var d = 1u; d < SG_SIZE; d <<= 1u) {
    for (var k = 0u; k < VECTORS_PER_THREAD; k++) {
      let y = subgroupShuffleUp((*rows)[k], d);
      if (LANE >= d) {
        (*rows)[k] = combine(y, (*rows)[k]);
      }
    }
  }
}

// After lanes_scan_rows: row k's value in the lane before (identity in lane 0), and in the
// last lane (the row's total).
fn lanes_row_prefix(rows: ptr<function, array<T, VECTORS_PER_THREAD>>, k: u32) -> T {
  let y = subgroupShuffleUp((*rows)[k], 1u);
  return select(y, identity(), LANE == 0u);
}
fn lanes_row_total(rows: ptr<function, array<T, VECTORS_PER_THREAD>>, k: u32) -> T {
  return subgroupShuffle((*rows)[k], SG_SIZE - 1u);
}
