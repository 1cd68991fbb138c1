// The tile shape of this pipeline: workgroup size, vectors (of four elements) per thread,
// the subgroup size the scan network is built for, and the threads that do not touch the
// tile (the chained scan's look-back subgroup). All are specialization constants chosen
// by the host per device; none is baked into the shader.
#ifndef GPUSCAN_TILE_SHAPE_GLSL
#define GPUSCAN_TILE_SHAPE_GLSL

layout(local_size_x_id = GS_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = GS_SPEC_WORKGROUP_SIZE) const uint WORKGROUP_SIZE = 256;
layout(constant_id = GS_SPEC_VECTORS_PER_THREAD) const uint VECTORS_PER_THREAD = 4;
// The logical subgroup size: the hardware's, or a smaller power of two (a test can prove
// the scan network for sizes the hardware does not have).
layout(constant_id = GS_SPEC_SUBGROUP_SIZE) const uint SUBGROUP_SIZE = 32;

// The chained scan's workgroup ends with one hardware subgroup of look-back lanes; every
// other kernel gives all its threads to the tile.
layout(constant_id = GS_SPEC_LOOKBACK_THREADS) const uint LOOKBACK_THREADS = 0;
const uint TILE_THREADS = WORKGROUP_SIZE - LOOKBACK_THREADS;

const uint SUBGROUPS = TILE_THREADS / SUBGROUP_SIZE;  // logical subgroups that scan the tile
const uint TILE_VECTORS = TILE_THREADS * VECTORS_PER_THREAD;
const uint TILE_ELEMENTS = 4 * TILE_VECTORS;

layout(push_constant) uniform PushConstants { GS_PUSH_CONSTANT_FIELDS } pc;

// Workgroup index in a grid that may be two-dimensional (more workgroups than one
// dimension allows).
uint linear_workgroup_id() { return gl_WorkGroupID.y * pc.grid_width + gl_WorkGroupID.x; }

#endif
