// Device level: the spine of split tile-state words (encoding in shaders/common/
// tile_state.h, docs/protocol.md section 2) and the run's control words. WGSL has 32-bit
// atomics only, all relaxed, and no fences: exactly what the protocol assumes (section 5).
// A 32-bit value takes K = 2 words, bits [0, 16) in word 0 and [16, 32) in word 1, each
// with the tile's state in its top two bits; every write is atomicMax, so states only
// advance (I1), and a read counts only when both words carry the same state (I4).
//
// Unlike the subgroup-wide window of the Vulkan kernel, one invocation does every spine
// access here: it loads the 2 * WINDOW words of a window back to back (one round trip), and
// needs no ballot or shuffle, so the same look-back serves the path without subgroups.
//!import "common/params.wgsl"

@group(0) @binding(GS_BINDING_SPINE_WORDS) var<storage, read_write> spine: array<atomic<u32>>;
@group(0) @binding(GS_BINDING_CONTROL) var<storage, read_write> control: array<atomic<u32>>;

const TILE_WORDS: u32 = 2u;

fn control_word(word: u32) -> u32 { return P.control_base + word; }

// Moves `tile`'s words to `state` carrying `value`; a word already in a later state keeps
// it. Returns the words as they were before.
fn post_tile(tile: u32, state: u32, value: T) -> vec2<u32> {
  let bits = t_bits(value);
  let w0 = atomicMax(&spine[TILE_WORDS * tile], state | (bits & GS_PIECE_MASK));
  let w1 = atomicMax(&spine[TILE_WORDS * tile + 1u], state | (bits >> GS_PIECE_BITS));
  return vec2<u32>(w0, w1);
}

fn read_tile(tile: u32) -> vec2<u32> {
  return vec2<u32>(atomicLoad(&spine[TILE_WORDS * tile]),
                   atomicLoad(&spine[TILE_WORDS * tile + 1u]));
}

// The tile's state if both words agree, else NOT_READY (a message still in flight, I4).
fn tile_state(words: vec2<u32>) -> u32 {
  let state = words.x & GS_STATE_MASK;
  return select(GS_STATE_NOT_READY, state, (words.y & GS_STATE_MASK) == state);
}

fn tile_value(words: vec2<u32>) -> T {
  return t_from_bits((words.x & GS_PIECE_MASK) | ((words.y & GS_PIECE_MASK) << GS_PIECE_BITS));
}

fn init_value() -> T {
  if (P.carry_in == NO_CARRY) {
    return t_from_bits(P.init_bits);
  }
  return t_from_bits(atomicLoad(&control[P.carry_in]));
}
