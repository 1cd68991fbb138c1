// Device level: the spine of tile-state words (encoding in tile_state.h) and what a
// workgroup does with it: post its own tile, read a window of predecessors, insert a
// fallback's value.
//
// All of it is done by the look-back lanes, the workgroup's first logical subgroup. In a
// window read, lane l holds word (l % K) of tile (cursor - l / K), so one read covers
// SUBGROUP_SIZE / K tiles; a tile's K lanes are neighbours and agree on what they saw
// through shuffles. All accesses are relaxed atomics: a tile's message counts only when
// all K of its words carry the same state.
//
// The portable form splits a tile's value over K = TILE_SPLIT_WORDS 32-bit words. Built with
// GS_PACKED_STATE (devices with 64-bit buffer atomics), one lane holds a whole tile, K = 1:
// each 32-bit half of the value takes a 64-bit spine word of its own, the state in its high
// half (the same codes) and the half in its low half; one word for 32-bit types, two for
// 64-bit ones, posted and read separately and counted only when both carry the same state.
// Then a window covers 32 tiles of any type, and no lanes need to agree.
#ifndef GPUSCAN_TILE_STATE_GLSL
#define GPUSCAN_TILE_STATE_GLSL

#include "interface.h"
#include "tile_state.h"
#include "types.glsl"
#include "tile_shape.glsl"
#include "monoid.glsl"
#include "subgroup_scan.glsl"

#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_ballot : require

// The value a tile posts: the scan's element T under its monoid, unless the kernel defines
// TILE_VALUE first, with TILE_VALUE_WORDS (32-bit words), tile_value_to_words,
// tile_value_from_words, tile_identity and tile_combine (the compaction kernels post a
// 64-bit count: shaders/common/compaction.glsl).
#ifndef TILE_VALUE
#define TILE_VALUE T
#define TILE_VALUE_WORDS T_WORDS
#define tile_value_to_words t_to_words
#define tile_value_from_words t_from_words
#define tile_identity identity
#define tile_combine combine
#endif
#define TILE_SPLIT_WORDS (2 * TILE_VALUE_WORDS)

#if GS_PACKED_STATE
#extension GL_EXT_shader_atomic_int64 : require
#define WORDS_PER_TILE 1u
#define SPINE_WORD uint64_t
#define PARTS TILE_VALUE_WORDS  // spine words a lane's TILE_WORD spans
#if TILE_VALUE_WORDS == 1
#define TILE_WORD uint64_t
uint64_t part_of(TILE_WORD word, uint p) { return word; }
void set_part(inout TILE_WORD word, uint p, uint64_t x) { word = x; }
#else
#define TILE_WORD u64vec2
uint64_t part_of(TILE_WORD word, uint p) { return word[p]; }
void set_part(inout TILE_WORD word, uint p, uint64_t x) { word[p] = x; }
#endif
uint state_of(TILE_WORD word) {
  const uint state = uint(part_of(word, 0) >> 32) & GS_STATE_MASK;
  for (uint p = 1; p < PARTS; ++p) {
    if ((uint(part_of(word, p) >> 32) & GS_STATE_MASK) != state) return GS_STATE_NOT_READY;
  }
  return state;
}
uint64_t part_word(uint state, TILE_VALUE value, uint p) {
  return (uint64_t(state) << 32) | tile_value_to_words(value)[p];
}
#else
#define WORDS_PER_TILE TILE_SPLIT_WORDS
#define SPINE_WORD uint
#define PARTS 1
#define TILE_WORD uint
uint part_of(TILE_WORD word, uint p) { return word; }
void set_part(inout TILE_WORD word, uint p, uint x) { word = x; }
uint state_of(TILE_WORD word) { return word & GS_STATE_MASK; }
#endif
layout(binding = GS_BINDING_SPINE_WORDS, std430) buffer SpineWords {
  SPINE_WORD spine_words[];
};

// Tiles one window read covers, and windows read at once: a look-back step issues
// LOOKBACK_DEPTH independent reads, so it costs one memory round trip for
// LOOKBACK_DEPTH * WINDOW tiles.
const uint WINDOW = SUBGROUP_SIZE / WORDS_PER_TILE;
layout(constant_id = GS_SPEC_LOOKBACK_DEPTH) const uint LOOKBACK_DEPTH = 1;

bool is_lookback_lane() { return flat_thread_id() < SUBGROUP_SIZE; }
uint word_index() { return sg_lane() % WORDS_PER_TILE; }
uint window_slot() { return sg_lane() / WORDS_PER_TILE; }  // 0: the newest tile of the window

#if !GS_PACKED_STATE
// Part p (the only one) of this lane's word of `value` in `state`: the 16-bit piece the
// word carries, and the state.
SPINE_WORD part_word(uint state, TILE_VALUE value, uint p) {
  const uint j = word_index();
  return state | ((tile_value_to_words(value)[j >> 1] >> (GS_PIECE_BITS * (j & 1))) & GS_PIECE_MASK);
}
#endif

// Where part p of this lane's word of `tile` lies in the spine (this run's half).
uint spine_index(uint tile, uint p) {
  return pc.spine_base + (tile * WORDS_PER_TILE + word_index()) * PARTS + p;
}

// The spine's two halves take turns: this run zeroes the words the run before it wrote in
// the other half, which the run after it will use. Runs execute one after another, so no
// run reads a half while another clears it (docs/protocol.md, "Reset between runs").
void clear_other_half() {
  const uint stride = pc.tile_count * WORKGROUP_SIZE;
  for (uint i = linear_workgroup_id() * WORKGROUP_SIZE + gl_LocalInvocationIndex;
       i < pc.clear_count; i += stride) {
    spine_words[pc.clear_base + i] = SPINE_WORD(0);
  }
}

// Moves this lane's word of `tile` to `state` carrying `value` (the same in all K lanes of
// the tile); a word already in a later state keeps it. Returns the word as it was before.
TILE_WORD post_lane_word(uint tile, uint state, TILE_VALUE value) {
  TILE_WORD before = TILE_WORD(GS_STATE_NOT_READY);
  for (uint p = 0; p < PARTS; ++p) {
    set_part(before, p,
             atomicMax(spine_words[spine_index(tile, p)], part_word(state, value, p),
                       gl_ScopeQueueFamily, gl_StorageSemanticsNone, gl_SemanticsRelaxed));
  }
  return before;
}

// Moves `tile`'s words to `state` carrying `value`; a word already in a later state keeps
// it. Returns, in the lanes of window slot 0, the words as they were before.
TILE_WORD post_tile(uint tile, uint state, TILE_VALUE value) {
  if (window_slot() != 0) return TILE_WORD(GS_STATE_NOT_READY);
  return post_lane_word(tile, state, value);
}

// Reads window `depth` of the tiles before `cursor`: slot s holds tile
// cursor - depth * WINDOW - s. Slots before tile 0 read NOT_READY.
TILE_WORD read_window(uint cursor, uint depth) {
  TILE_WORD word = TILE_WORD(GS_STATE_NOT_READY);
  const uint back = depth * WINDOW + window_slot();
  if (back > cursor) return word;
  for (uint p = 0; p < PARTS; ++p) {
    set_part(word, p, atomicLoad(spine_words[spine_index(cursor - back, p)], gl_ScopeQueueFamily,
                                 gl_StorageSemanticsNone, gl_SemanticsRelaxed));
  }
  return word;
}

// The state of this lane's tile: that of all its K words if they agree, else NOT_READY (a
// message still in flight).
uint tile_state(TILE_WORD word) {
  const uint state = state_of(word);
  bool agree = true;
  for (uint j = 1; j < WORDS_PER_TILE; ++j) {
    const uint other = subgroupShuffleXor(state, j);
    agree = agree && other == state;
  }
  return agree ? state : GS_STATE_NOT_READY;
}

// The value of this lane's tile, joined from the pieces of its K lanes.
TILE_VALUE tile_value(TILE_WORD word) {
#if GS_PACKED_STATE
  uvec2 halves = uvec2(0u);
  for (uint p = 0; p < PARTS; ++p) halves[p] = uint(part_of(word, p));
  return tile_value_from_words(halves);
#else
  const uint first = sg_lane() - word_index() + (gl_SubgroupInvocationID - sg_lane());
  uvec2 words = uvec2(0u);
  for (uint j = 0; j < TILE_SPLIT_WORDS; ++j) {
    const uint piece = subgroupShuffle(word & GS_PIECE_MASK, first + j);
    words[j >> 1] |= piece << (GS_PIECE_BITS * (j & 1));
  }
  return tile_value_from_words(words);
#endif
}

// Combines the values of window slots [first, end) in tile order (oldest first), the result
// in every look-back lane. An ordered butterfly: at each step a lane joins its partner's
// partial, the higher lane's (older tiles) on the left.
TILE_VALUE reduce_window(TILE_VALUE value, uint first, uint end) {
  const uint s = window_slot();
  TILE_VALUE x = word_index() == 0 && s >= first && s < end ? value : tile_identity();
  for (uint d = 1; d < SUBGROUP_SIZE; d <<= 1) {
    const TILE_VALUE partner = subgroupShuffleXor(x, d);
    x = (sg_lane() & d) == 0 ? tile_combine(partner, x) : tile_combine(x, partner);
  }
  return x;
}

// The last window slot before `end` whose tile is in `wanted` (tested in the first lane of
// each tile), or WINDOW if there is none.
uint last_slot_in(uint state, uint wanted, uint end) {
  const uvec4 ballot =
      subgroupBallot(word_index() == 0 && state == wanted && window_slot() < end);
  return subgroupBallotBitCount(ballot) == 0 ? WINDOW
                                             : subgroupBallotFindMSB(ballot) / WORDS_PER_TILE;
}

// The first window slot whose tile is in `wanted` (tested in the first lane of each tile),
// or WINDOW if there is none.
uint first_slot_in(uint state, uint wanted) {
  const uvec4 ballot = subgroupBallot(word_index() == 0 && state == wanted);
  return subgroupBallotBitCount(ballot) == 0 ? WINDOW
                                             : subgroupBallotFindLSB(ballot) / WORDS_PER_TILE;
}

#endif
