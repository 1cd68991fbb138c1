// The element type T of this shader variant, chosen at build time by -DGS_DTYPE, with the
// helpers that move a T in and out of 32-bit words (for the split tile state).
#ifndef GPUSCAN_TYPES_GLSL
#define GPUSCAN_TYPES_GLSL

#include "interface.h"

#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_subgroup_extended_types_int64 : require
#extension GL_EXT_spirv_intrinsics : require

#if GS_DTYPE == GS_DTYPE_U32
#define T uint
#define TV uvec4
#define T_WORDS 1
#define T_IS_FLOAT 0
#define T_MAX 0xFFFFFFFFu
#define T_LOWEST 0u
uvec2 t_to_words(T x) { return uvec2(x, 0u); }
T t_from_words(uvec2 w) { return w.x; }
#elif GS_DTYPE == GS_DTYPE_I32
#define T int
#define TV ivec4
#define T_WORDS 1
#define T_IS_FLOAT 0
#define T_MAX 0x7FFFFFFF
#define T_LOWEST (-0x7FFFFFFF - 1)
uvec2 t_to_words(T x) { return uvec2(uint(x), 0u); }
T t_from_words(uvec2 w) { return int(w.x); }
#elif GS_DTYPE == GS_DTYPE_F32
// SignedZeroInfNanPreserve (SPIR-V float controls): without it a driver may treat -0.0 as
// +0.0 and assume no NaNs, and the float identities (-0.0 for add, NaN for min/max:
// monoid.glsl) and fmin/fmax's NaN tests would not hold. The NVIDIA driver (580, H100)
// turned exclusive f32 sums of -0.0 into +0.0 at the start of every subgroup's rows.
spirv_execution_mode(capabilities = [4466], 4461, 32);
#define T float
#define TV vec4
#define T_WORDS 1
#define T_IS_FLOAT 1
#define T_MAX uintBitsToFloat(0x7F800000u)
#define T_LOWEST uintBitsToFloat(0xFF800000u)
#define T_NAN uintBitsToFloat(0x7FC00000u)
#define T_NEGATIVE_ZERO uintBitsToFloat(0x80000000u)
uvec2 t_to_words(T x) { return uvec2(floatBitsToUint(x), 0u); }
T t_from_words(uvec2 w) { return uintBitsToFloat(w.x); }
#elif GS_DTYPE == GS_DTYPE_U64
#define T uint64_t
#define TV u64vec2
#define T_WORDS 2
#define T_IS_FLOAT 0
#define T_MAX 0xFFFFFFFFFFFFFFFFul
#define T_LOWEST 0ul
uvec2 t_to_words(T x) { return unpackUint2x32(x); }
T t_from_words(uvec2 w) { return packUint2x32(w); }
#elif GS_DTYPE == GS_DTYPE_I64
#define T int64_t
#define TV i64vec2
#define T_WORDS 2
#define T_IS_FLOAT 0
#define T_MAX 0x7FFFFFFFFFFFFFFFl
#define T_LOWEST (-0x7FFFFFFFFFFFFFFFl - 1l)
uvec2 t_to_words(T x) { return unpackUint2x32(uint64_t(x)); }
T t_from_words(uvec2 w) { return int64_t(packUint2x32(w)); }
#elif GS_DTYPE == GS_DTYPE_F64
spirv_execution_mode(capabilities = [4466], 4461, 64);  // as for f32, above
#define T double
#define TV dvec2
#define T_WORDS 2
#define T_IS_FLOAT 1
#define T_MAX packDouble2x32(uvec2(0u, 0x7FF00000u))
#define T_LOWEST packDouble2x32(uvec2(0u, 0xFFF00000u))
#define T_NAN packDouble2x32(uvec2(0u, 0x7FF80000u))
#define T_NEGATIVE_ZERO packDouble2x32(uvec2(0u, 0x80000000u))
uvec2 t_to_words(T x) { return unpackDouble2x32(x); }
T t_from_words(uvec2 w) { return packDouble2x32(w); }
#else
#error "GS_DTYPE must name one of the GS_DTYPE_* codes"
#endif

// Elements in one 16-byte vector TV.
#define VECTOR_ELEMENTS (GS_VECTOR_BYTES / (4 * T_WORDS))

// K: the number of 16-bit pieces (and spine words) a T is split into.
#define SPLIT_WORDS (2 * T_WORDS)

#endif
