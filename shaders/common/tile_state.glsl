// Device level: the spine of split tile-state words (encoding in tile_state.h) and the
// three things a workgroup does with it: post, read, and insert a fallback's value.
//
// A tile's K = SPLIT_WORDS words are handled by lanes 0..K-1 of the workgroup's first
// subgroup, one word per lane; the functions below are called by exactly those lanes.
// All accesses are relaxed atomics: a message counts only when all K words agree.
#ifndef GPUSCAN_TILE_STATE_GLSL
#define GPUSCAN_TILE_STATE_GLSL

#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(binding = GS_BINDING_SPINE_WORDS, std430) buffer SpineWords { uint spine_words[]; };

bool is_word_lane() { return flat_thread_id() < SPLIT_WORDS; }

// The 16-bit piece of `value` that this lane's word carries.
uint piece_of(T value) {
  const uint j = gl_SubgroupInvocationID;
  return (t_to_words(value)[j >> 1] >> (GS_PIECE_BITS * (j & 1))) & GS_PIECE_MASK;
}

// Joins the pieces held by the word lanes back into a value.
T join_pieces(uint word) {
  const uint j = gl_SubgroupInvocationID;
  const uint shifted = (word & GS_PIECE_MASK) << (GS_PIECE_BITS * (j & 1));
  return t_from_words(uvec2(subgroupOr(j < 2 ? shifted : 0u), subgroupOr(j >= 2 ? shifted : 0u)));
}

uint spine_index(uint tile) { return tile * SPLIT_WORDS + gl_SubgroupInvocationID; }

// Moves the tile's words to `state` carrying `value`; a word already in a later state
// keeps it. Returns this lane's word as it was before.
uint post_tile(uint tile, uint state, T value) {
  return atomicMax(spine_words[spine_index(tile)], state | piece_of(value), gl_ScopeQueueFamily,
                   gl_StorageSemanticsNone, gl_SemanticsRelaxed);
}

uint read_tile_word(uint tile) {
  return atomicLoad(spine_words[spine_index(tile)], gl_ScopeQueueFamily, gl_StorageSemanticsNone,
                    gl_SemanticsRelaxed);
}

// The state of a tile as read by the word lanes: that of all words if they agree, else
// NOT_READY (a message still in flight).
uint agreed_state(uint word) {
  const uint state = word & GS_STATE_MASK;
  return subgroupAllEqual(state) ? state : GS_STATE_NOT_READY;
}

#endif
