// The tile shape of this pipeline: workgroup size, 16-byte vectors per thread,
// and the subgroup size the scan network is built for. All three are specialization
// constants chosen by the host per device; none is baked into the shader.
#ifndef GPUSCAN_TILE_SHAPE_GLSL
#define GPUSCAN_TILE_SHAPE_GLSL

#include "interface.h"
#include "types.glsl"

#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = GS_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = GS_SPEC_WORKGROUP_SIZE) const uint WORKGROUP_SIZE = 256;
layout(constant_id = GS_SPEC_VECTORS_PER_THREAD) const uint VECTORS_PER_THREAD = 4;
// Loops over a thread's vectors, and the subgroup steps that scan them together, begin
// with UNROLL_IF_64BIT. For 64-bit types it asks the driver to unroll them once the shape
// is specialized: left to itself, the NVIDIA driver kept some rolled from 4 vectors a
// thread on, which put the thread's arrays in local memory (u64 at 256 x 6 measured 0.34
// of memcpy against 0.78 on an H200), and the unrolled steps gain another 1%. For 32-bit
// types the driver's own choice measured 1% faster.
#if T_WORDS == 2
#define UNROLL_IF_64BIT [[unroll]]
#else
#define UNROLL_IF_64BIT
#endif
// The logical subgroup size: the hardware's, or a smaller power of two (a test can prove
// the scan network for sizes the hardware does not have).
layout(constant_id = GS_SPEC_SUBGROUP_SIZE) const uint SUBGROUP_SIZE = 32;

const uint SUBGROUPS = WORKGROUP_SIZE / SUBGROUP_SIZE;
const uint TILE_VECTORS = WORKGROUP_SIZE * VECTORS_PER_THREAD;
const uint TILE_ELEMENTS = VECTOR_ELEMENTS * TILE_VECTORS;

layout(push_constant) uniform PushConstants { GS_PUSH_CONSTANT_FIELDS } pc;

// Workgroup index in a grid that may be two-dimensional (more workgroups than one
// dimension allows).
uint linear_workgroup_id() { return gl_WorkGroupID.y * pc.grid_width + gl_WorkGroupID.x; }

#endif
