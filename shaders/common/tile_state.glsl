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
// The portable form splits a tile's value over K = SPLIT_WORDS 32-bit words. Built with
// GS_PACKED_STATE (32-bit types, devices with 64-bit buffer atomics), a tile is one 64-bit
// word instead, K = 1: the state in the high half (the same codes), the value in the low
// half. Then a window covers twice the tiles and no lanes need to agree.
#ifndef GPUSCAN_TILE_STATE_GLSL
#define GPUSCAN_TILE_STATE_GLSL

#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_ballot : require

#if GS_PACKED_STATE
#extension GL_EXT_shader_atomic_int64 : require
#define TILE_WORD uint64_t
#define WORDS_PER_TILE 1u
uint state_of(TILE_WORD word) { return uint(word >> 32) & GS_STATE_MASK; }
TILE_WORD word_of(uint state, T value) { return (uint64_t(state) << 32) | t_to_words(value).x; }
#else
#define TILE_WORD uint
#define WORDS_PER_TILE SPLIT_WORDS
uint state_of(TILE_WORD word) { return word & GS_STATE_MASK; }
#endif
layout(binding = GS_BINDING_SPINE_WORDS, std430) buffer SpineWords { TILE_WORD spine_words[]; };

// Tiles one window read covers, and windows read at once: a look-back step issues
// LOOKBACK_DEPTH independent reads, so it costs one memory round trip for
// LOOKBACK_DEPTH * WINDOW tiles.
const uint WINDOW = SUBGROUP_SIZE / WORDS_PER_TILE;
layout(constant_id = GS_SPEC_LOOKBACK_DEPTH) const uint LOOKBACK_DEPTH = 1;

bool is_lookback_lane() { return flat_thread_id() < SUBGROUP_SIZE; }
uint word_index() { return sg_lane() % WORDS_PER_TILE; }
uint window_slot() { return sg_lane() / WORDS_PER_TILE; }  // 0: the newest tile of the window

#if !GS_PACKED_STATE
// This lane's word of `value` in `state`: the 16-bit piece the word carries, and the state.
TILE_WORD word_of(uint state, T value) {
  const uint j = word_index();
  return state | ((t_to_words(value)[j >> 1] >> (GS_PIECE_BITS * (j & 1))) & GS_PIECE_MASK);
}
#endif

// Moves `tile`'s words to `state` carrying `value`; a word already in a later state keeps
// it. Returns, in the lanes of window slot 0, the words as they were before.
TILE_WORD post_tile(uint tile, uint state, T value) {
  if (window_slot() != 0) return TILE_WORD(GS_STATE_NOT_READY);
  return atomicMax(spine_words[tile * WORDS_PER_TILE + word_index()], word_of(state, value),
                   gl_ScopeQueueFamily, gl_StorageSemanticsNone, gl_SemanticsRelaxed);
}

// Reads window `depth` of the tiles before `cursor`: slot s holds tile
// cursor - depth * WINDOW - s. Slots before tile 0 read NOT_READY.
TILE_WORD read_window(uint cursor, uint depth) {
  const uint back = depth * WINDOW + window_slot();
  if (back > cursor) return TILE_WORD(GS_STATE_NOT_READY);
  return atomicLoad(spine_words[(cursor - back) * WORDS_PER_TILE + word_index()],
                    gl_ScopeQueueFamily, gl_StorageSemanticsNone, gl_SemanticsRelaxed);
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
T tile_value(TILE_WORD word) {
#if GS_PACKED_STATE
  return t_from_words(uvec2(uint(word), 0u));
#else
  const uint first = sg_lane() - word_index() + (gl_SubgroupInvocationID - sg_lane());
  uvec2 words = uvec2(0u);
  for (uint j = 0; j < SPLIT_WORDS; ++j) {
    const uint piece = subgroupShuffle(word & GS_PIECE_MASK, first + j);
    words[j >> 1] |= piece << (GS_PIECE_BITS * (j & 1));
  }
  return t_from_words(words);
#endif
}

// Combines the values of window slots [0, count) in tile order (oldest first), the result
// in every look-back lane. An ordered butterfly: at each step a lane joins its partner's
// partial, the higher lane's (older tiles) on the left.
T reduce_window(T value, uint count) {
  T x = word_index() == 0 && window_slot() < count ? value : identity();
  for (uint d = 1; d < SUBGROUP_SIZE; d <<= 1) {
    const T partner = subgroupShuffleXor(x, d);
    x = (sg_lane() & d) == 0 ? combine(partner, x) : combine(x, partner);
  }
  return x;
}

// The first window slot whose tile is in `state` (tested in slot 0 lanes of each tile),
// or WINDOW if there is none.
uint first_slot_in(uint state, uint wanted) {
  const uvec4 ballot = subgroupBallot(word_index() == 0 && state == wanted);
  return subgroupBallotBitCount(ballot) == 0 ? WINDOW : subgroupBallotFindLSB(ballot) / WORDS_PER_TILE;
}

#endif
