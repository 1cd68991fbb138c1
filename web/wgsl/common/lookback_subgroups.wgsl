// The look-back's spine accesses with the `subgroups` feature: the look-back lanes are
// subgroup 0, and a window read is one load per lane, all at once (one round trip for up to
// WINDOW tiles): lane l loads word l % 2 of tile cursor - l / 2 (docs/protocol.md, "Window
// reads"). Every lane then gathers the whole window through shuffles, so all the look-back
// lanes hold the same values and walk in step; what they post or count, lane 0 does once.

fn is_lookback_lane() -> bool { return SG_ID == 0u; }

// Tiles one window covers: the subgroup's lanes, two words a tile, at most WINDOW.
fn window_tiles() -> u32 { return min(SG_SIZE / TILE_WORDS, WINDOW); }

// Window slot s holds tile cursor - s; slots before tile 0 read NOT_READY.
fn read_window(cursor: u32) -> array<vec2<u32>, WINDOW> {
  let tiles = window_tiles();
  let slot = LANE / TILE_WORDS;
  var word = 0u;
  if (slot < tiles && slot <= cursor) {
    word = atomicLoad(&spine[TILE_WORDS * (cursor - slot) + LANE % TILE_WORDS]);
  }
  var words: array<vec2<u32>, WINDOW>;
  for (var s = 0u; s < tiles; s++) {
    words[s] = vec2<u32>(subgroupShuffle(word, TILE_WORDS * s),
                         subgroupShuffle(word, TILE_WORDS * s + 1u));
  }
  return words;
}

// Moves `tile`'s words to `state` carrying `value` (lanes 0 and 1, a word each); a word
// already in a later state keeps it. Returns, in every lane, the words as they were before.
fn post_tile(tile: u32, state: u32, value: T) -> vec2<u32> {
  let bits = t_bits(value);
  var before = 0u;
  if (LANE < TILE_WORDS) {
    let piece = select(bits >> GS_PIECE_BITS, bits & GS_PIECE_MASK, LANE == 0u);
    before = atomicMax(&spine[TILE_WORDS * tile + LANE], state | piece);
  }
  return vec2<u32>(subgroupShuffle(before, 0u), subgroupShuffle(before, 1u));
}

// A word one lane read, the same in every look-back lane.
fn lookback_uniform(x: u32) -> u32 { return subgroupShuffle(x, 0u); }
