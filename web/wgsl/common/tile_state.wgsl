// Device level: the spine of split tile-state words (encoding in shaders/common/
// tile_state.h, docs/protocol.md section 2) and the run's control words. WGSL has 32-bit
// atomics only, all relaxed, and no fences: exactly what the protocol assumes (section 5).
// A 32-bit value takes K = 2 words, bits [0, 16) in word 0 and [16, 32) in word 1, each
// with the tile's state in its top two bits; every write is atomicMax, so states only
// advance (I1), and a read counts only when both words carry the same state (I4).
//
// The look-back lanes read and post through common/lookback_subgroups.wgsl (subgroup 0, a
// word per lane) or common/lookback_emulated.wgsl (invocation 0 alone): a pipeline takes
// one of them, as it takes one of the lanes_* pieces.
//!import "common/params.wgsl"

@group(0) @binding(GS_BINDING_SPINE_WORDS) var<storage, read_write> spine: array<atomic<u32>>;
@group(0) @binding(GS_BINDING_CONTROL) var<storage, read_write> control: array<atomic<u32>>;

const TILE_WORDS: u32 = 2u;

fn control_word(word: u32) -> u32 { return P.control_base + word; }

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
