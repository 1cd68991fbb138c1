// The look-back's spine accesses without the `subgroups` feature: invocation 0 alone is the
// look-back lane; it issues a window's 2 * WINDOW loads back to back.

fn is_lookback_lane() -> bool { return LID == 0u; }

fn window_tiles() -> u32 { return WINDOW; }

// Window slot s holds tile cursor - s; slots before tile 0 read NOT_READY.
fn read_window(cursor: u32) -> array<vec2<u32>, WINDOW> {
  var words: array<vec2<u32>, WINDOW>;
  for (var s = 0u; s < WINDOW; s++) {
    if (s <= cursor) {
      words[s] = vec2<u32>(atomicLoad(&spine[TILE_WORDS * (cursor - s)]),
                           atomicLoad(&spine[TILE_WORDS * (cursor - s) + 1u]));
    }
  }
  return words;
}

// Moves `tile`'s words to `state` carrying `value`; a word already in a later state keeps
// it. Returns the words as they were before.
fn post_tile(tile: u32, state: u32, value: T) -> vec2<u32> {
  let bits = t_bits(value);
  let w0 = atomicMax(&spine[TILE_WORDS * tile], state | (bits & GS_PIECE_MASK));
  let w1 = atomicMax(&spine[TILE_WORDS * tile + 1u], state | (bits >> GS_PIECE_BITS));
  return vec2<u32>(w0, w1);
}

fn lookback_uniform(x: u32) -> u32 { return x; }
