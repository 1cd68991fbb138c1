// The look-back's window with the `subgroups` feature, as docs/protocol.md ("Window reads")
// specifies it: the look-back lanes are subgroup 0; lane l loads both words of tile
// cursor - l, so one read covers W = lanes tiles in one round trip (as a packed 64-bit
// tile word does in the Vulkan kernel; one word a lane covered half as many tiles and
// needed a shuffle to agree on a tile's state, 1.5-3% slower on an H100: docs/performance.md
// W34). A tile whose words disagree reads as not ready (I4); ballots find the first
// not-ready and INCLUSIVE slots, and an ordered butterfly joins the values taken, older
// tiles on the left. Every look-back lane ends with the same results, so the lanes walk in
// step; what they post or count, lane 0 does once.

fn is_lookback_lane() -> bool { return SG_ID == 0u; }

fn window_tiles() -> u32 { return SG_SIZE; }
fn window_slot() -> u32 { return LANE; }  // 0: the newest tile of the window

// This lane's tile of the window of tiles cursor, cursor - 1, ...: its two words; before
// tile 0: 0 (NOT_READY).
alias Window = vec2<u32>;
fn read_window(cursor: u32) -> Window {
  if (window_slot() > cursor) {
    return vec2<u32>(0u);
  }
  let word = TILE_WORDS * (cursor - window_slot());
  return vec2<u32>(atomicLoad(&spine[word]), atomicLoad(&spine[word + 1u]));
}

// A window slot as this lane sees it: the tile's state if both its words agree (else
// NOT_READY, I4) and its value.
struct Slot {
  state: u32,
  value: T,
}
fn read_slot(words: Window) -> Slot { return Slot(tile_state(words), tile_value(words)); }

// The first (or last) window slot that votes, or window_tiles().
fn first_voting_slot(vote: bool) -> u32 {
  let ballot = subgroupBallot(vote);
  if (SG_SIZE <= 32u) {  // folds away where the size is a constant
    return select(window_tiles(), firstTrailingBit(ballot.x), ballot.x != 0u);
  }
  for (var i = 0u; i < 4u; i++) {
    if (ballot[i] != 0u) {
      return (32u * i + firstTrailingBit(ballot[i]));
    }
  }
  return window_tiles();
}
fn last_voting_slot(vote: bool) -> u32 {
  let ballot = subgroupBallot(vote);
  if (SG_SIZE <= 32u) {
    return select(window_tiles(), firstLeadingBit(ballot.x), ballot.x != 0u);
  }
  for (var i = 4u; i > 0u; i--) {
    if (ballot[i - 1u] != 0u) {
      return (32u * (i - 1u) + firstLeadingBit(ballot[i - 1u]));
    }
  }
  return window_tiles();
}

// The values of slots [first, end) joined in tile order (oldest on the left), in every lane.
fn reduce_window(value: T, first: u32, end: u32) -> T {
  let slot = window_slot();
  var x = select(identity(), value, slot >= first && slot < end);
  if (!T_IS_FLOAT) {
    // Integers give the same bits in any order: WGSL's subgroup operation, which some GPUs
    // run as one instruction, instead of the butterfly's five shuffles (W11).
    return lanes_reduce_commutative(x);
  }
  for (var d = 1u; d < SG_SIZE; d <<= 1u) {
    let partner = subgroupShuffleXor(x, d);
    x = select(combine(x, partner), combine(partner, x), (LANE & d) == 0u);
  }
  return x;
}

// What a step takes from the window read at `cursor`: the READY slots from the newest on,
// ending with an INCLUSIVE one if it comes before any not-ready slot (then `complete`).
// Tile `early_end` counts as INCLUSIVE with `early_value` (the early window).
fn take_window(words: Window, cursor: u32, early_end: u32, early_value: T) -> Taken {
  let read = read_slot(words);
  var state = read.state;
  var value = read.value;
  let slot = window_slot();
  if (early_end != NO_TILE && slot <= cursor && cursor - slot == early_end) {
    state = GS_STATE_INCLUSIVE;
    value = early_value;
  }
  let not_ready = first_voting_slot(state == GS_STATE_NOT_READY);
  let inclusive = first_voting_slot(state == GS_STATE_INCLUSIVE);
  let complete = inclusive < not_ready;
  let taken = select(not_ready, inclusive + 1u, complete);
  return Taken(complete, taken, reduce_window(value, 0u, taken));
}

// What the window read with the tile's loads already settles (docs/protocol.md, "The early
// window"): the newest INCLUSIVE slot and the READY slots after it up to the newest
// not-ready one, joined; `end` is the newest tile of that run (NO_TILE: none).
fn early_window(words: Window, tile: u32) -> Early {
  let read = read_slot(words);
  let state = read.state;
  let value = read.value;
  let slot = window_slot();
  let inclusive = first_voting_slot(state == GS_STATE_INCLUSIVE && slot < tile);
  let not_ready = last_voting_slot(state == GS_STATE_NOT_READY && slot < inclusive);
  let first = select(not_ready + 1u, 0u, not_ready == window_tiles());
  let reduction = reduce_window(value, first, inclusive + 1u);
  if (inclusive == window_tiles()) {
    return Early(NO_TILE, identity());
  }
  return Early(tile - 1u - first, reduction);
}

// Moves `tile`'s words to `state` carrying `value` (lanes 0 and 1, a word each); a word
// already in a later state keeps it.
// Nothing is returned, so that no lane waits for the atomics' answers: measured 2-3% faster
// than posting through post_tile_returning (docs/performance.md W13).
fn post_tile(tile: u32, state: u32, value: T) {
  let bits = t_bits(value);
  if (LANE < TILE_WORDS) {
    let piece = select(bits >> GS_PIECE_BITS, bits & GS_PIECE_MASK, LANE == 0u);
    atomicMax(&spine[TILE_WORDS * tile + LANE], state | piece);
  }
}

// The same, returning in every lane the words as they were before (for an insertion).
fn post_tile_returning(tile: u32, state: u32, value: T) -> vec2<u32> {
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
