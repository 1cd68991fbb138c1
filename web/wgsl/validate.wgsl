// Checks a timed run on the device, so that every benchmark run is validated without
// reading the output back: each output element must follow from its predecessor and the
// input (out[i] == out[i-1] + in[i] for an inclusive sum), which by induction proves them
// all. Mismatches are counted in control word GS_CONTROL_VALIDATION_ERRORS.
//!import "common/tile_state.wgsl"

@group(0) @binding(GS_BINDING_INPUT_SCALARS) var<storage, read> in_scalars: array<T>;
@group(0) @binding(GS_BINDING_OUTPUT_SCALARS) var<storage, read> out_scalars: array<T>;

fn expected(i: u32) -> T {
  if (MODE == GS_VALIDATE_COPY) {
    return in_scalars[i];
  }
  let init = t_from_bits(P.init_bits);
  if (KIND == GS_KIND_EXCLUSIVE) {
    if (i == 0u) {
      return init;
    }
    return combine(out_scalars[i - 1u], in_scalars[i - 1u]);
  }
  if (i == 0u) {
    return combine(init, in_scalars[0]);
  }
  return combine(out_scalars[i - 1u], in_scalars[i]);
}

// Float sums and products round differently in every association: each element may differ
// from its predecessor's continuation by the tolerance. Everything else must match exactly.
fn matches(got: T, want: T, i: u32) -> bool {
  if (MODE == GS_VALIDATE_COPY || !T_IS_FLOAT) {
    return t_bits(got) == t_bits(want);
  }
  let tolerance = bitcast<f32>(P.tolerance_bits);
  let g = f32(got);
  let w = f32(want);
  if (OP == GS_OP_ADD) {
    return abs(g - w) <= tolerance * f32(i + 1u);
  }
  if (OP == GS_OP_MUL) {
    return abs(g - w) <= tolerance * f32(i + 2u) * abs(w);
  }
  return t_bits(got) == t_bits(want);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
  let stride = groups.x * WORKGROUP_SIZE;
  var errors = 0u;
  for (var i = id.x; i < P.n; i += stride) {
    if (!matches(out_scalars[i], expected(i), i)) {
      errors += 1u;
    }
  }
  if (errors != 0u) {
    atomicAdd(&control[control_word(GS_CONTROL_VALIDATION_ERRORS)], errors);
  }
}
