// Subgroup level, with the `subgroups` feature: the lanes of one hardware subgroup, of
// whatever size the device runs (4 to 128; read at run time, so that one pipeline serves
// every size, unless the host fixes it, see below). Scans across lanes use shuffles, so that every operator works. The rest of the
// kernels see only these functions; lanes_emulated.wgsl is the path without the feature.
struct Invocation {
  @builtin(local_invocation_index) lid: u32,
  @builtin(subgroup_size) sg_size: u32,
  @builtin(subgroup_invocation_id) sg_lane: u32,
}

var<private> LID: u32;
var<private> LANE: u32;
var<private> SG_ID: u32;
// SG_SIZE and set_subgroup_size come from the pipeline's prelude (src/pipelines.mjs): a
// constant where the host knows the device's one subgroup size, as the Vulkan kernels take
// it as a specialization constant (loops over the lanes unroll, divisions fold), else a
// private variable set here from the builtin.

// The kernels take subgroup s to be invocations [s * size, (s + 1) * size), as every known
// driver lays them out (WGSL has no subgroup id). Returns whether that holds here; a
// kernel that finds it does not says so in the control buffer and the host raises an error.
fn begin_invocation(inv: Invocation) -> bool {
  LID = inv.lid;
  LANE = inv.sg_lane;
  set_subgroup_size(inv.sg_size);
  SG_ID = inv.lid / SG_SIZE;
  let first = subgroupBroadcast(inv.lid, 0u);
  return inv.sg_size == SG_SIZE && inv.lid % inv.sg_size == inv.sg_lane &&
         first == inv.lid - inv.sg_lane && WORKGROUP_SIZE % inv.sg_size == 0u &&
         inv.sg_size >= MIN_SUBGROUP_SIZE;
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

// The join of `x` over the lanes, in every lane, in no particular order, by WGSL's subgroup
// operations (one instruction on some GPUs): integer operators only, whose bits do not
// depend on the order. Compiled for every type; called for integers only.
fn lanes_reduce_commutative(x: T) -> T {
  switch (OP) {
    case GS_OP_ADD: { return subgroupAdd(x); }
    case GS_OP_MUL: { return subgroupMul(x); }
    case GS_OP_MIN: { return subgroupMin(x); }
    case GS_OP_MAX: { return subgroupMax(x); }
    case GS_OP_BIT_AND: { return bitcast<T>(subgroupAnd(bitcast<u32>(x))); }
    case GS_OP_BIT_OR: { return bitcast<T>(subgroupOr(bitcast<u32>(x))); }
    default: { return bitcast<T>(subgroupXor(bitcast<u32>(x))); }
  }
}
