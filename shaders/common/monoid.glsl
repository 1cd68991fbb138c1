// What a pipeline computes: the monoid (operator and identity) and the scan kind, chosen
// by specialization constants so that the driver folds the switches away. Operands are
// always (earlier, later).
#ifndef GPUSCAN_MONOID_GLSL
#define GPUSCAN_MONOID_GLSL

#include "interface.h"
#include "types.glsl"

layout(constant_id = GS_SPEC_OP) const uint OP = GS_OP_ADD;
layout(constant_id = GS_SPEC_KIND) const uint KIND = GS_KIND_INCLUSIVE;

// Mirrors core/monoid.hpp's identity(): for floats, -0.0 for add (+0.0 + -0.0 is +0.0) and
// NaN for min/max (the operand fmin/fmax ignore), so that combine(identity(), x) == x for
// every x, signed zeros and NaNs included.
T identity() {
  switch (OP) {
    case GS_OP_MUL: return T(1);
#if T_IS_FLOAT
    case GS_OP_MIN: return T_NAN;
    case GS_OP_MAX: return T_NAN;
    default: return T_NEGATIVE_ZERO;  // add
#else
    case GS_OP_MIN: return T_MAX;
    case GS_OP_MAX: return T_LOWEST;
    case GS_OP_BIT_AND: return ~T(0);
    default: return T(0);  // add, bit_or, bit_xor
#endif
  }
}

T combine(T a, T b) {
  switch (OP) {
    case GS_OP_MUL: return a * b;
#if T_IS_FLOAT
    // fmin/fmax: a NaN operand is ignored unless both are NaN.
    case GS_OP_MIN: return isnan(a) ? b : (isnan(b) ? a : min(a, b));
    case GS_OP_MAX: return isnan(a) ? b : (isnan(b) ? a : max(a, b));
#else
    case GS_OP_MIN: return min(a, b);
    case GS_OP_MAX: return max(a, b);
    case GS_OP_BIT_AND: return a & b;
    case GS_OP_BIT_OR: return a | b;
    case GS_OP_BIT_XOR: return a ^ b;
#endif
    default: return a + b;
  }
}

// The vector helpers name their components: loops over v[c] made glslc emit different
// code, which measured slower for u32 csdldf on the NVIDIA driver (H200).
#if VECTOR_ELEMENTS == 4
TV combine(T a, TV b) {
  return TV(combine(a, b.x), combine(a, b.y), combine(a, b.z), combine(a, b.w));
}
#else
TV combine(T a, TV b) { return TV(combine(a, b.x), combine(a, b.y)); }
#endif

#endif
