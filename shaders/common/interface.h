// The contract between host and shaders, included by both C++ and GLSL, so that every
// number below exists exactly once. Only preprocessor definitions that mean the same in
// both languages belong here.
#ifndef GPUSCAN_SHADER_INTERFACE_H
#define GPUSCAN_SHADER_INTERFACE_H

// Element types (the -DGS_DTYPE=... a shader variant is compiled with, and gpuscan::DType).
#define GS_DTYPE_U32 0
#define GS_DTYPE_I32 1
#define GS_DTYPE_F32 2
#define GS_DTYPE_U64 3
#define GS_DTYPE_I64 4
#define GS_DTYPE_F64 5

// Monoid operators (gpuscan::Op), selected by a specialization constant.
#define GS_OP_ADD 0
#define GS_OP_MUL 1
#define GS_OP_MIN 2
#define GS_OP_MAX 3
#define GS_OP_BIT_AND 4
#define GS_OP_BIT_OR 5
#define GS_OP_BIT_XOR 6

// Every vector load and store moves 16 bytes: four 32-bit or two 64-bit elements. Wider
// accesses are split by the hardware into 16-byte ones whose lanes are no longer
// contiguous, so each touches twice the sectors it uses.
#define GS_VECTOR_BYTES 16

// Scan kinds (gpuscan::Kind).
#define GS_KIND_INCLUSIVE 0
#define GS_KIND_EXCLUSIVE 1
#define GS_KIND_REDUCE 2

// Descriptor bindings of the one set every pipeline uses. Several bindings alias the same
// buffer through different element views (vectors for the bulk, scalars for tails).
#define GS_BINDING_INPUT_VECTORS 0
#define GS_BINDING_INPUT_SCALARS 1
#define GS_BINDING_OUTPUT_VECTORS 2
#define GS_BINDING_OUTPUT_SCALARS 3
#define GS_BINDING_SPINE_WORDS 4
#define GS_BINDING_SPINE_VALUES 5
#define GS_BINDING_CONTROL 6
// A segmented scan's segment starts (DESIGN 3f; run-local element indices, ascending, one
// per segment that meets the run). Other runs bind the control words here, unread.
#define GS_BINDING_SEGMENT_STARTS 7
// The largest tile a segmented scan takes (its bitmap of segment starts is this large).
#define GS_MAX_TILE_ELEMENTS 32768
#define GS_BINDING_COUNT 8

// Words of the control buffer, the same on both backends (CUDA's RunControl). Words
// [0, GS_CONTROL_RUN_WORDS) belong to one chained run and read zero when it starts
// (docs/protocol.md, "Reset between runs"); a benchmark resets the validation count. The
// four statistics are counted by the statistics variant only. The starvation mark is set by
// a fallback that found its tile unposted and shortens the nearest successor's wait
// (docs/protocol.md, "The starvation mark").
#define GS_CONTROL_TILE_COUNTER 0
#define GS_CONTROL_LOOKBACK_ABANDONED 1
#define GS_CONTROL_SPINS 2
#define GS_CONTROL_LOOKBACK_STEPS 3
#define GS_CONTROL_FALLBACKS 4
#define GS_CONTROL_INSERTIONS 5
#define GS_CONTROL_STARVED 6
#define GS_CONTROL_RUN_WORDS 7
#define GS_CONTROL_VALIDATION_ERRORS 7
#define GS_CONTROL_WORDS 8

// Specialization constant ids.
#define GS_SPEC_WORKGROUP_SIZE 0
#define GS_SPEC_VECTORS_PER_THREAD 1
#define GS_SPEC_SUBGROUP_SIZE 2
#define GS_SPEC_OP 3
#define GS_SPEC_KIND 4
#define GS_SPEC_FALLBACK 5
#define GS_SPEC_MAX_SPINS 6
#define GS_SPEC_PHASE 7
#define GS_SPEC_STATISTICS 8
#define GS_SPEC_LOOKBACK_DEPTH 9
#define GS_SPEC_DISPATCH_ORDER 10
#define GS_SPEC_ELEMENT_OFFSETS 11
#define GS_SPEC_ROWS 12
#define GS_SPEC_SEGMENTS 13
#define GS_SPEC_ROUND_ROWS 14
#define GS_SPEC_COUNT 15

// Phases of the reduce-then-scan kernel (one shader, three pipelines).
#define GS_RTS_REDUCE 0
#define GS_RTS_SPINE 1
#define GS_RTS_SCAN 2

// Validation modes of the validation kernel.
#define GS_VALIDATE_COPY 0
#define GS_VALIDATE_SCAN 1

// Push constants, the same layout on both sides: element count, tile count, the width of
// the workgroup grid (a grid is two-dimensional when there are more workgroups than one
// dimension allows), the simulated-blocking mask, the init value as two 32-bit words (low
// first), for validating float results a tolerance (float32 bits): per element of a sum,
// relative per element of a product; and for the chained scans, in spine words, where this
// run's half of the spine starts, where the other half starts, and how many words of it
// the run before this one wrote (this run zeroes them); with element offsets (a pipeline
// of its own), the elements between where the input and output bindings start and where
// the data starts (offsets in the application's buffers need not meet the binding
// alignment, DESIGN 3a); and for a batched scan (DESIGN 3f, ROWS pipelines), the row length,
// where element 0 lies in its row (row_phase < row_length), and what precedes element 0 in
// its row as two words (docs/protocol.md, "Batched scans"). A segmented scan (ROWS and
// SEGMENTS pipelines) reads its segment starts instead: row_length counts them, and a
// reduction writes the segment of start j at element out_shift + j of the output.
#ifdef VULKAN
#define GS_U32 uint
#else
#define GS_U32 std::uint32_t
#endif
#define GS_PUSH_CONSTANT_FIELDS \
  GS_U32 n;                     \
  GS_U32 tile_count;            \
  GS_U32 grid_width;            \
  GS_U32 blocking_mask;         \
  GS_U32 init_lo;               \
  GS_U32 init_hi;               \
  GS_U32 tolerance_bits;        \
  GS_U32 spine_base;            \
  GS_U32 clear_base;            \
  GS_U32 clear_count;           \
  GS_U32 in_shift;              \
  GS_U32 out_shift;             \
  GS_U32 row_length;            \
  GS_U32 row_phase;             \
  GS_U32 lead_lo;               \
  GS_U32 lead_hi;

// No blocking: no tile index + 1 has all of these bits clear.
#define GS_NO_BLOCKING 0xFFFFFFFFu

#endif
