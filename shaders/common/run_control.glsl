// Device level, beside the spine: the control words of a chained run (GS_CONTROL_* in
// interface.h, the same words as CUDA's RunControl): the tile counter, the report of a csdl
// look-back that gave up, the statistics, and the starvation mark.
#ifndef GPUSCAN_RUN_CONTROL_GLSL
#define GPUSCAN_RUN_CONTROL_GLSL

#include "interface.h"
#include "tile_shape.glsl"

#extension GL_KHR_memory_scope_semantics : require

layout(binding = GS_BINDING_CONTROL, std430) buffer Control {
  uint control[];
};

// The starvation mark (docs/protocol.md, "The starvation mark"): set by a fallback that
// inserted into a tile nobody had posted, read by the look-backs of the same run, and clear
// when a run starts. CUDA gives each spine half a control block of its own, which the run
// before clears. Here one control word serves both halves, a bit each: a run reads and sets
// the bit of its half and clears the other one for the run after it, as it clears the
// other half of the spine. A host fill of the run words before a run clears both bits.
uint starved_bit() { return pc.spine_base < pc.clear_base ? 1u : 2u; }

bool read_starved() {
  const uint mark = atomicLoad(control[GS_CONTROL_STARVED], gl_ScopeQueueFamily,
                               gl_StorageSemanticsNone, gl_SemanticsRelaxed);
  return (mark & starved_bit()) != 0;
}

void mark_starved() {
  atomicOr(control[GS_CONTROL_STARVED], starved_bit(), gl_ScopeQueueFamily,
           gl_StorageSemanticsNone, gl_SemanticsRelaxed);
}

// From one invocation of the run: keeps only this run's bit.
void clear_next_run_starved() {
  atomicAnd(control[GS_CONTROL_STARVED], starved_bit(), gl_ScopeQueueFamily,
            gl_StorageSemanticsNone, gl_SemanticsRelaxed);
}

#endif
