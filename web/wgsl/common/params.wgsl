// Device level: what one dispatch is told (the WebGPU counterpart of the push constants in
// shaders/common/interface.h), one uniform buffer per chunk of a run. A run longer than
// one storage binding is cut into chunks; each chunk's total is the next chunk's init value
// (DESIGN.md section 3d), read from the control word `carry_in` of the chunk before.
struct Params {
  n: u32,               // elements in this chunk
  tile_count: u32,      // tiles in this chunk
  grid_width: u32,      // workgroups in x (the grid is two-dimensional past 65535)
  blocking_mask: u32,   // simulated blocking: tiles with ((tile + 1) & mask) == 0 skip READY
  init_bits: u32,       // the init value's bits, used when carry_in is NO_CARRY
  carry_in: u32,        // control word holding the init value (the previous chunk's total)
  control_base: u32,    // this chunk's block of control words
  tolerance_bits: u32,  // validation of float results (f32 bits)
}
@group(0) @binding(WEB_BINDING_PARAMS) var<uniform> P: Params;

const NO_CARRY: u32 = 0xFFFFFFFFu;

// Takes the builtin itself (not a copy in a private variable), so that WGSL's uniformity
// analysis sees the tile index as uniform and allows barriers after it.
fn linear_workgroup_id(wid: vec3<u32>) -> u32 { return wid.y * P.grid_width + wid.x; }
