// Workgroup level: joins the subgroups' totals. After one barrier every invocation reads
// the totals it needs from workgroup memory (broadcast reads: 8 on a GPU with 32 lanes)
// and combines them in subgroup order, so the tile's total comes out of the same code, in
// the same order, wherever it is computed (docs/protocol.md, I2: owner and fallback post
// the same bits).

// Two slots: the tile's own scan, and a fallback's reduction of a predecessor tile, which
// must not disturb the first.
const SLOT_OWN: u32 = 0u;
const SLOT_FALLBACK: u32 = 1u;
const MAX_SUBGROUPS: u32 = WORKGROUP_SIZE / MIN_SUBGROUP_SIZE;
var<workgroup> wg_partials: array<T, 2u * MAX_SUBGROUPS>;

struct Joined {
  before: T,  // the totals of the subgroups before this invocation's
  total: T,   // the workgroup's total
}

// Call from uniform control flow; `subgroup_total` matters in each subgroup's last lane.
fn wg_join_subgroups(slot: u32, subgroup_total: T) -> Joined {
  if (LANE == SG_SIZE - 1u) {
    wg_partials[slot * MAX_SUBGROUPS + SG_ID] = subgroup_total;
  }
  workgroupBarrier();
  var joined = Joined(identity(), identity());
  let count = WORKGROUP_SIZE / SG_SIZE;
  for (var s = 0u; s < count; s++) {
    let x = wg_partials[slot * MAX_SUBGROUPS + s];
    if (s < SG_ID) {
      joined.before = combine(joined.before, x);
    }
    joined.total = combine(joined.total, x);
  }
  return joined;
}

// Inclusive scan of one value per invocation across the workgroup, in workgroup memory
// (the reduce-then-scan spine; any lane width). Call from uniform control flow.
var<workgroup> wg_values: array<T, WORKGROUP_SIZE>;
fn wg_inclusive_scan(value: T) -> T {
  var x = value;
  wg_values[LID] = x;
  workgroupBarrier();
  for (var d = 1u; d < WORKGROUP_SIZE; d <<= 1u) {
    var left = identity();
    if (LID >= d) {
      left = wg_values[LID - d];
    }
    workgroupBarrier();
    if (LID >= d) {
      x = combine(left, x);
      wg_values[LID] = x;
    }
    workgroupBarrier();
  }
  return x;
}
