// Every kernel starts with this: the shared interface, the element type and the monoid.
#ifndef GPUSCAN_PRELUDE_GLSL
#define GPUSCAN_PRELUDE_GLSL
#include "interface.h"
#include "tile_state.h"
#include "types.glsl"
#include "tile_shape.glsl"
#include "monoid.glsl"
#endif
