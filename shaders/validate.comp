#version 460
#pragma use_vulkan_memory_model
// Checks a timed run on the device, so that every run is validated without reading the
// output back: each output element must follow from its predecessor and the input
// (out[i] == out[i-1] + in[i] for an inclusive sum, a row's first from the init value in a
// batched scan), which by induction proves them all. Mismatches are counted in the control buffer.
#include "common/interface.h"
#include "common/types.glsl"
#include "common/tile_shape.glsl"
#include "common/monoid.glsl"

layout(constant_id = GS_SPEC_PHASE) const uint MODE = GS_VALIDATE_SCAN;

layout(binding = GS_BINDING_INPUT_SCALARS, std430) readonly buffer InputScalars {
  T in_scalars[];
};
// Read-only here: the scan kernels' output is this kernel's input.
layout(binding = GS_BINDING_OUTPUT_SCALARS, std430) readonly buffer OutputScalars {
  T out_scalars[];
};
layout(binding = GS_BINDING_CONTROL, std430) buffer Control { uint control[]; };

T expected(uint i) {
  if (MODE == GS_VALIDATE_COPY) return in_scalars[i];
  const T init = t_from_words(uvec2(pc.init_lo, pc.init_hi));
  // A row's first element starts from init (row_length 0: one row).
  const bool start = pc.row_length == 0 ? i == 0 : i % pc.row_length == 0;
  if (KIND == GS_KIND_EXCLUSIVE) {
    return start ? init : combine(out_scalars[i - 1], in_scalars[i - 1]);
  }
  return combine(start ? init : out_scalars[i - 1], in_scalars[i]);
}

// Float sums and products round differently in every association; each element may differ
// from its predecessor's continuation by the tolerance (host: 1e-5 * the largest |x| for
// sums, which bounds the allowed error of 1e-5 * the sum of |x| so far; a few ulps per
// element for products). Everything else must match exactly.
bool matches(T got, T want, uint i) {
#if T_IS_FLOAT
  if (isnan(want)) return isnan(got);
  const T tolerance = T(uintBitsToFloat(pc.tolerance_bits));
  if (pc.row_length != 0) i %= pc.row_length;  // the elements combined so far in its row
  if (OP == GS_OP_ADD) return abs(got - want) <= tolerance * T(i + 1);
  if (OP == GS_OP_MUL) return abs(got - want) <= tolerance * T(i + 2) * abs(want);
  return got == want;
#else
  return got == want;
#endif
}

void main() {
  const uint threads = pc.grid_width * WORKGROUP_SIZE;
  uint errors = 0;
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += threads) {
    const bool right = MODE == GS_VALIDATE_COPY
                           ? t_to_words(out_scalars[i]) == t_to_words(expected(i))
                           : matches(out_scalars[i], expected(i), i);
    if (!right) ++errors;
  }
  if (errors != 0) atomicAdd(control[GS_CONTROL_VALIDATION_ERRORS], errors);
}
