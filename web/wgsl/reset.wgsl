// Zeroes what a chained run needs zeroed, the spine words of its tiles and its control
// words (docs/protocol.md, "Reset between runs"), as a dispatch of its own in the same
// compute pass as the scan: work that is recorded once and submitted again resets itself,
// and the reset is inside the timed pass.
//!import "common/tile_state.wgsl"

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
  let stride = groups.x * WORKGROUP_SIZE;
  for (var i = id.x; i < TILE_WORDS * P.tile_count; i += stride) {
    atomicStore(&spine[i], 0u);
  }
  if (id.x < GS_CONTROL_RUN_WORDS) {
    atomicStore(&control[control_word(id.x)], 0u);
  }
}
