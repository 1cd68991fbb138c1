// The tile shape of this pipeline: workgroup size, 16-byte vectors per thread,
// and the subgroup size the scan network is built for. All three are specialization
// constants chosen by the host per device; none is baked into the shader.
#ifndef GPUSCAN_TILE_SHAPE_GLSL
#define GPUSCAN_TILE_SHAPE_GLSL

layout(local_size_x_id = GS_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = GS_SPEC_WORKGROUP_SIZE) const uint WORKGROUP_SIZE = 256;
layout(constant_id = GS_SPEC_VECTORS_PER_THREAD) const uint VECTORS_PER_THREAD = 4;
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
