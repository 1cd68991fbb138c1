// Subgroup level: scans across the lanes of one logical subgroup with shuffles, so that
// any operator works and any power-of-two logical size up to the hardware's does too.
// Every function here must be reached by all lanes of the hardware subgroup.
#ifndef GPUSCAN_SUBGROUP_SCAN_GLSL
#define GPUSCAN_SUBGROUP_SCAN_GLSL

#include "types.glsl"
#include "tile_shape.glsl"
#include "monoid.glsl"

#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require

// Position of this invocation when the workgroup is laid out subgroup after subgroup.
uint flat_thread_id() { return gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID; }
uint sg_lane() { return gl_SubgroupInvocationID & (SUBGROUP_SIZE - 1); }
uint sg_id() { return flat_thread_id() / SUBGROUP_SIZE; }

// One step of a Kogge-Stone scan: joins the partial of the lane `d` below.
T sg_scan_step(T x, uint d) {
  const T y = subgroupShuffleUp(x, d);
  if (sg_lane() >= d) x = combine(y, x);
  return x;
}

// Kogge-Stone inclusive scan over the logical subgroup.
T sg_inclusive_scan(T x) {
  for (uint d = 1; d < SUBGROUP_SIZE; d <<= 1) x = sg_scan_step(x, d);
  return x;
}

// The same for a thread's VECTORS_PER_THREAD independent values, step by step together:
// the scans' shuffles overlap, and the values stay in registers. (Scanned one after the
// other inside a loop over the rows, 64-bit tiles went to local memory on the NVIDIA
// driver and ran at two thirds of the speed on an H200.)
void sg_inclusive_scan_each(inout T x[VECTORS_PER_THREAD]) {
  UNROLL_IF_64BIT for (uint d = 1; d < SUBGROUP_SIZE; d <<= 1) {
    UNROLL_IF_64BIT for (uint k = 0; k < VECTORS_PER_THREAD; ++k) x[k] = sg_scan_step(x[k], d);
  }
}

// The value of the previous lane (identity in lane 0): an inclusive scan made exclusive.
T sg_shift_up(T inclusive) {
  T y = subgroupShuffleUp(inclusive, 1);
  return sg_lane() == 0 ? identity() : y;
}

// The value of the logical subgroup's last lane, broadcast to all its lanes.
T sg_last(T x) { return subgroupShuffle(x, gl_SubgroupInvocationID | (SUBGROUP_SIZE - 1)); }

#endif
