// The look-back's window without the `subgroups` feature (and on CPU drivers): invocation 0
// alone is the look-back lane. It issues a window's 2 * WINDOW loads back to back and takes
// the slots one after another, with the same rules as lookback_subgroups.wgsl.

fn is_lookback_lane() -> bool { return LID == 0u; }

fn window_tiles() -> u32 { return WINDOW; }

// Slot s holds the words of tile cursor - s; slots before tile 0 read NOT_READY.
alias Window = array<vec2<u32>, WINDOW>;
fn read_window(cursor: u32) -> Window {
  var words: Window;
  for (var s = 0u; s < WINDOW; s++) {
    if (s <= cursor) {
      words[s] = vec2<u32>(atomicLoad(&spine[TILE_WORDS * (cursor - s)]),
                           atomicLoad(&spine[TILE_WORDS * (cursor - s) + 1u]));
    }
  }
  return words;
}

fn take_window(words: Window, cursor: u32, early_end: u32, early_value: T) -> Taken {
  var taken = Taken(false, 0u, identity());
  for (var s = 0u; s < WINDOW && s <= cursor; s++) {
    var state = tile_state(words[s]);
    var value = tile_value(words[s]);
    if (cursor - s == early_end) {
      state = GS_STATE_INCLUSIVE;
      value = early_value;
    }
    if (state == GS_STATE_NOT_READY) {
      break;
    }
    taken.value = combine(value, taken.value);
    taken.taken = s + 1u;
    if (state == GS_STATE_INCLUSIVE) {
      taken.complete = true;
      break;
    }
  }
  return taken;
}

fn early_window(words: Window, tile: u32) -> Early {
  var inclusive = WINDOW;
  for (var s = 0u; s < WINDOW; s++) {
    if (s < tile && tile_state(words[s]) == GS_STATE_INCLUSIVE) {
      inclusive = s;
      break;
    }
  }
  if (inclusive == WINDOW) {
    return Early(NO_TILE, identity());
  }
  var value = tile_value(words[inclusive]);
  var first = inclusive;
  while (first > 0u && tile_state(words[first - 1u]) == GS_STATE_READY) {
    first -= 1u;
    value = combine(value, tile_value(words[first]));
  }
  return Early(tile - 1u - first, value);
}

// Moves `tile`'s words to `state` carrying `value`; a word already in a later state keeps
// it.
fn post_tile(tile: u32, state: u32, value: T) {
  _ = post_tile_returning(tile, state, value);
}

// The same, returning the words as they were before (for an insertion).
fn post_tile_returning(tile: u32, state: u32, value: T) -> vec2<u32> {
  let bits = t_bits(value);
  let w0 = atomicMax(&spine[TILE_WORDS * tile], state | (bits & GS_PIECE_MASK));
  let w1 = atomicMax(&spine[TILE_WORDS * tile + 1u], state | (bits >> GS_PIECE_BITS));
  return vec2<u32>(w0, w1);
}

fn lookback_uniform(x: u32) -> u32 { return x; }
