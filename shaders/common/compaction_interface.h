// The contract between host and the compaction kernels (shaders/select.comp), included by
// both C++ and GLSL beside interface.h (DESIGN 3e).
#ifndef GPUSCAN_COMPACTION_INTERFACE_H
#define GPUSCAN_COMPACTION_INTERFACE_H

#include "interface.h"

// Operations. A tile's aggregate is the number of elements it keeps (a 64-bit count), for
// run-length encoding with the position of its last head.
#define GS_COMPACT_SELECT_IF 0       // x[i] where x[i] <predicate> the constant
#define GS_COMPACT_SELECT_FLAGGED 1  // x[i] where flags[i] != 0
#define GS_COMPACT_UNIQUE 2          // x[i] where i == 0 or x[i] != x[i-1]
#define GS_COMPACT_PARTITION 3       // select-if, and the rejected x[i] in order to a second output
// Run-length encode: unique's heads, and each run's length (a uint64) to a second output.
// Its tile aggregate is the count and the position of the tile's last head (compaction.glsl).
#define GS_COMPACT_RLE 4
// select-flagged, and the unflagged x[i] in order to a second output
#define GS_COMPACT_PARTITION_FLAGGED 5

// Built-in predicates of select-if: x <op> c, c given as the init value (push constants
// init_lo, init_hi).
#define GS_PREDICATE_LT 0
#define GS_PREDICATE_LE 1
#define GS_PREDICATE_GT 2
#define GS_PREDICATE_GE 3
#define GS_PREDICATE_EQ 4
#define GS_PREDICATE_NE 5

// The compaction kernels use the one descriptor set layout of interface.h (eight storage
// buffers) with bindings of their own meaning; the input vectors, spine and control words
// stay where tile_input.glsl, tile_state.glsl and run_control.glsl expect them. The input's
// elements are read through the vectors' binding too (tile_input.glsl's
// GS_INPUT_SCALARS_BINDING), so that the flags have a binding of their own and partition by
// flags reads its flags and writes its rejected elements (binding 3) in one run.
#define GS_COMPACT_BINDING_INPUT_VECTORS 0  // x as 16-byte vectors
#define GS_COMPACT_BINDING_INPUT_SCALARS 0  // x as elements (tails): the same binding
#define GS_COMPACT_BINDING_FLAGS 1          // select-flagged, partition-flagged: the flags
#define GS_COMPACT_BINDING_OUTPUT 2         // the kept elements, in order
#define GS_COMPACT_BINDING_AUX 3            // partitions: the rejected; rle: the lengths (u64)
#define GS_COMPACT_BINDING_COUNT 5          // the count: two 32-bit words, low first
// Compaction in chunks (docs/protocol.md, "Compaction in chunks"): what a chunk hands the
// next, in two slots of GS_CARRY_WORDS 32-bit words; chunk c reads slot (c - 1) & 1 and its
// last tile writes slot c & 1. Each 64-bit value low word first.
#define GS_COMPACT_BINDING_CARRY 7
#define GS_CARRY_COUNT 0         // kept elements up to the chunk's end
#define GS_CARRY_LAST_HEAD 2     // run-length encoding: where the last run began (0-based)
#define GS_CARRY_LAST_ELEMENT 4  // the chunk's last element's bits (unique, rle)
#define GS_CARRY_WORDS 8
// The wide build (outputs beyond one binding, through buffer device addresses: docs/protocol.md,
// "Compaction in chunks") reads the outputs' device addresses after the two slots, written by
// the host before the run's first chunk: the kept elements' (rle: the values'), and the second
// output's (partition's rejected, rle's lengths), each low word first.
#define GS_COMPACT_OUTPUT_ADDRESS (2 * GS_CARRY_WORDS)
#define GS_COMPACT_AUX_ADDRESS (2 * GS_CARRY_WORDS + 2)
#define GS_COMPACT_CARRY_BUFFER_WORDS (2 * GS_CARRY_WORDS + 4)
#if GS_COMPACT_BINDING_INPUT_VECTORS != GS_BINDING_INPUT_VECTORS || GS_BINDING_SPINE_WORDS != 4 || \
    GS_BINDING_CONTROL != 6 || GS_COMPACT_BINDING_CARRY != GS_BINDING_SEGMENT_STARTS
#error "compaction bindings must keep the input, spine and control words where interface.h has them"
#endif

// The compaction kernels take one specialization constant at GS_SPEC_PHASE (which only the
// reduce-then-scan and validation kernels use otherwise): the operation in bits 0-3, the
// predicate in bits 4-7, the flags' 32-bit words per element (1 or 2) in bits 8-11, and in
// bit 12 whether the output is the input (select and unique only: docs/protocol.md,
// "In-place compaction"), so that only in-place runs pay for its claims and fences, and in
// bit 13 whether the rows' packed counts take 16 bits a row whatever the subgroup's size (a
// test's choice: subgroups of 64 lanes and more take them anyway, and no device here has
// such; compaction.glsl, select_tile).
#define GS_SPEC_COMPACTION GS_SPEC_PHASE
// The compaction kernels take no rows: their chunk's place in the push constants' row fields.
// row_length: the chunk's first element (a run of n elements with no chunk before it: 0);
// row_phase: the chunk's number (0: no carry to read); lead_lo: 1 if a chunk follows (the
// last tile then writes the carry); lead_hi: the high word of the chunk's first element (read
// by the wide build only; below one binding of the outputs it is 0).
#define GS_COMPACTION_SPEC(operation, predicate, flag_words, in_place) \
  ((operation) | ((predicate) << 4) | ((flag_words) << 8) | ((in_place) << 12))
#define GS_COMPACTION_WIDE_ROW_COUNTS (1u << 13)
// In place, each tile has a 32-bit claim word after the tile-state words of its spine half
// (16 bytes a tile): 0, or GS_CLAIMED with the tile's count.
#define GS_CLAIMED 0x80000000u

#endif
