// Subgroup level without the `subgroups` feature: the whole workgroup is one logical
// subgroup, and its scans go through workgroup memory (Kogge-Stone, two barriers a step).
// Same functions as lanes_subgroups.wgsl; they must be called in uniform control flow.
struct Invocation {
  @builtin(local_invocation_index) lid: u32,
}

var<private> LID: u32;
var<private> LANE: u32;
var<private> SG_SIZE: u32;
var<private> SG_ID: u32;

fn begin_invocation(inv: Invocation) -> bool {
  LID = inv.lid;
  LANE = inv.lid;
  SG_SIZE = WORKGROUP_SIZE;
  SG_ID = 0u;
  return true;
}

var<workgroup> lanes_rows: array<T, WORKGROUP_SIZE * VECTORS_PER_THREAD>;

fn lanes_scan_rows(rows: ptr<function, array<T, VECTORS_PER_THREAD>>) {
  for (var k = 0u; k < VECTORS_PER_THREAD; k++) {
    lanes_rows[k * WORKGROUP_SIZE + LID] = (*rows)[k];
  }
  workgroupBarrier();
  for (var d = 1u; d < WORKGROUP_SIZE; d <<= 1u) {
    var left: array<T, VECTORS_PER_THREAD>;
    for (var k = 0u; k < VECTORS_PER_THREAD; k++) {
      if (LID >= d) {
        left[k] = lanes_rows[k * WORKGROUP_SIZE + LID - d];
      }
    }
    workgroupBarrier();
    for (var k = 0u; k < VECTORS_PER_THREAD; k++) {
      if (LID >= d) {
        (*rows)[k] = combine(left[k], (*rows)[k]);
        lanes_rows[k * WORKGROUP_SIZE + LID] = (*rows)[k];
      }
    }
    workgroupBarrier();
  }
}

fn lanes_row_prefix(rows: ptr<function, array<T, VECTORS_PER_THREAD>>, k: u32) -> T {
  if (LID == 0u) {
    return identity();
  }
  return lanes_rows[k * WORKGROUP_SIZE + LID - 1u];
}
fn lanes_row_total(rows: ptr<function, array<T, VECTORS_PER_THREAD>>, k: u32) -> T {
  return lanes_rows[k * WORKGROUP_SIZE + WORKGROUP_SIZE - 1u];
}

// The join of `x` over the lanes, in the last lane at least: for commutative operators only.
fn lanes_reduce_commutative(x: T) -> T {
  var rows: array<T, VECTORS_PER_THREAD>;
  for (var k = 0u; k < VECTORS_PER_THREAD; k++) {
    rows[k] = select(identity(), x, k == 0u);
  }
  lanes_scan_rows(&rows);
  return rows[0];
}
