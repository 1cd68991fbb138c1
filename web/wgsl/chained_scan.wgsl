// Single-pass chained scan. With FALLBACK it is decoupled fallback (csdldf): a look-back
// that waits too long on a tile reduces that tile itself. Without, it is decoupled
// look-back (csdl), which waits as long as it takes and so needs forward progress. The
// protocol is docs/protocol.md's: the walk of section 4 ("The look-back the kernels run":
// windows, patience, fallback and insertion, the starvation mark, the early window), run by
// the look-back lanes. The spine and the run's control words are zeroed by reset.wgsl in the
// same pass before this dispatch, so a recorded command buffer replays exactly.
//!import "common/tile_scan.wgsl"
//!import "common/tile_state.wgsl"

const LOOKBACK_DONE: u32 = 0xFFFFFFFFu;
const NO_TILE: u32 = 0xFFFFFFFFu;

var<workgroup> wg_tile: u32;
var<workgroup> wg_lookback: u32;  // LOOKBACK_DONE, or the tile the workgroup must reduce
var<workgroup> wg_prefix: T;

// Look-back state, held alike by every look-back lane (is_lookback_lane()).
var<private> starved: bool;             // whether this run has seen a starved tile
var<private> early_end: u32 = NO_TILE;  // what the early window settled: tiles up to
var<private> early_value: T;            // early_end reduce to early_value (inclusive)
var<private> spin_count: u32;           // statistics: steps that found the tile not ready
var<private> step_count: u32;           // look-back steps (window reads)
var<private> fallback_count: u32;       // fallbacks initiated
var<private> insertion_count: u32;      // insertions into a tile that was NOT_READY

fn is_blocked(tile: u32) -> bool { return ((tile + 1u) & P.blocking_mask) == 0u; }

// How many steps a look-back of `tile` waits on the not-ready tile `cursor` before it
// falls back (docs/protocol.md, "Patience").
fn patience(tile: u32, cursor: u32) -> u32 {
  if (!FALLBACK) {
    return MAX_SPINS;
  }
  if (starved && tile - cursor == 1u) {
    return 1u;
  }
  return MAX_SPINS * min(tile - cursor, 64u);
}

// What a look-back step takes from a window (common/lookback_*.wgsl): `taken` slots from
// the newest on, whose values join to `value`; `complete` when the last of them was
// INCLUSIVE (docs/protocol.md, "Window reads").
struct Taken {
  complete: bool,
  taken: u32,
  value: T,
}

// What the window read with the tile's loads settles (docs/protocol.md, "The early
// window"): tiles up to `end` reduce to the inclusive value `value` (NO_TILE: nothing).
struct Early {
  end: u32,
  value: T,
}

// Walks back from `cursor`, accumulating into `prefix`, until an INCLUSIVE tile ends the
// walk (true), or the newest tile not yet taken stays not ready for patience() steps
// (false: the caller falls back on `cursor`). csdl gives up after MAX_SPINS steps without
// progress instead, and reports it (docs/protocol.md, "csdl's bounded wait").
fn look_back(tile: u32, cursor: ptr<function, u32>, prefix: ptr<function, T>) -> bool {
  if (*cursor == early_end) {
    *prefix = combine(early_value, *prefix);
    return true;
  }
  var spins = 0u;
  // The starvation mark is loaded with the first window, in the same round trip (docs/
  // protocol.md, "The starvation mark"), and made uniform only once that window's load is
  // out: a shuffle of the mark before it would hold the window back by a round trip.
  let read_mark = FALLBACK && !starved;
  var mark = 0u;
  if (read_mark) {
    mark = atomicLoad(&control[control_word(GS_CONTROL_STARVED)]);
  }
  var first_step = true;
  loop {
    let window = read_window(*cursor);
    if (read_mark && first_step) {
      starved = lookback_uniform(mark) != 0u;
    }
    first_step = false;
    if (STATISTICS) {
      step_count += 1u;
    }
    // Tile 0 is never READY (I3), so a step that completes nothing stops before it.
    let step = take_window(window, *cursor, early_end, early_value);
    *prefix = combine(step.value, *prefix);
    if (step.complete) {
      return true;
    }
    *cursor -= step.taken;
    let moved = step.taken != 0u;
    if (moved) {
      spins = 0u;
      continue;
    }
    if (STATISTICS) {
      spin_count += 1u;
    }
    spins += 1u;
    if (spins >= patience(tile, *cursor)) {
      if (!FALLBACK && LID == 0u) {
        atomicAdd(&control[control_word(GS_CONTROL_LOOKBACK_ABANDONED)], 1u);
      }
      return !FALLBACK;
    }
  }
}

// Offers the fallback's `reduction` of `cursor` and continues from what was there
// (docs/protocol.md, "Fallback and insertion"). Returns true when the prefix is complete.
fn insert_fallback(cursor: ptr<function, u32>, prefix: ptr<function, T>, reduction: T) -> bool {
  let fallback_tile = *cursor;
  let before = post_tile_returning(
      fallback_tile, select(GS_STATE_READY, GS_STATE_INCLUSIVE, fallback_tile == 0u), reduction);
  let inserted = ((before.x | before.y) & GS_STATE_MASK) == GS_STATE_NOT_READY;
  if (STATISTICS) {
    fallback_count += 1u;
    if (inserted) {
      insertion_count += 1u;
    }
  }
  if (inserted && !starved) {
    starved = true;
    if (LID == 0u) {
      atomicOr(&control[control_word(GS_CONTROL_STARVED)], 1u);
    }
  }
  if (tile_state(before) == GS_STATE_INCLUSIVE) {
    *prefix = combine(tile_value(before), *prefix);
    return true;
  }
  *prefix = combine(reduction, *prefix);
  if (fallback_tile == 0u) {
    return true;
  }
  *cursor = fallback_tile - 1u;
  return false;
}

fn add_statistics() {
  if (spin_count != 0u) {
    atomicAdd(&control[control_word(GS_CONTROL_SPINS)], spin_count);
  }
  if (step_count != 0u) {
    atomicAdd(&control[control_word(GS_CONTROL_LOOKBACK_STEPS)], step_count);
  }
  if (fallback_count != 0u) {
    atomicAdd(&control[control_word(GS_CONTROL_FALLBACKS)], fallback_count);
  }
  if (insertion_count != 0u) {
    atomicAdd(&control[control_word(GS_CONTROL_INSERTIONS)], insertion_count);
  }
}

@compute @workgroup_size(WORKGROUP_SIZE)
// The workgroup id comes apart from the Invocation struct: WGSL's uniformity analysis takes
// a struct parameter as a whole, and its lane ids are not uniform.
fn main(invocation: Invocation, @builtin(workgroup_id) wid: vec3<u32>) {
  if (!begin_invocation(invocation)) {
    atomicOr(&control[control_word(WEB_CONTROL_LAYOUT_ERROR)], 1u);
  }
  var tile = linear_workgroup_id(wid);
  if (!DISPATCH_ORDER) {
    if (LID == 0u) {
      wg_tile = atomicAdd(&control[control_word(GS_CONTROL_TILE_COUNTER)], 1u);
    }
    tile = workgroupUniformLoad(&wg_tile);
  }
  if (tile >= P.tile_count) {
    return;
  }

  // The look-back lanes read the window before the tile while the tile loads.
  var early: Window;
  if (is_lookback_lane() && tile != 0u && (EXPERIMENT & 64u) == 0u) {
    early = read_window(tile - 1u);
  }
  var loaded = load_thread_vectors(tile);
  var aggregate = scan_loaded(&loaded, SLOT_OWN);
  // The init value belongs to tile 0, for its owner and any fallback on it alike.
  if (tile == 0u) {
    aggregate = combine(init_value(), aggregate);
  }

  var cursor = tile - 1u;
  var prefix = identity();
  // Diagnostics under EXPERIMENT (wrong results, timing only): bit 16 no look-back, 64 no
  // early window, 128 no posts, 256 no fallback code.
  var done = tile == 0u || (EXPERIMENT & 16u) != 0u;
  if (is_lookback_lane()) {
    if (tile == 0u) {
      post_tile(tile, GS_STATE_INCLUSIVE, aggregate);
    } else {
      if (!is_blocked(tile) && (EXPERIMENT & 128u) == 0u) {
        post_tile(tile, GS_STATE_READY, aggregate);
      }
      let settled = early_window(early, tile);
      early_end = settled.end;
      early_value = settled.value;
      if (STATISTICS) {
        step_count += 1u;
      }
    }
  }
  var fallback_tile = lookback_round(tile, aggregate, &done, &cursor, &prefix);
  // Bit 256 (diagnostic): no fallback code at all.
  if (fallback_tile != LOOKBACK_DONE && (EXPERIMENT & 256u) == 0u) {
    if (KIND != GS_KIND_REDUCE) {
      stash_tile_in_output(tile);
    }
    loop {
      fallback_round(fallback_tile, &done, &cursor, &prefix);
      fallback_tile = lookback_round(tile, aggregate, &done, &cursor, &prefix);
      if (fallback_tile == LOOKBACK_DONE) {
        break;
      }
    }
    if (KIND != GS_KIND_REDUCE) {
      restore_tile_from_output(tile);
    }
  }
  finish_tile(tile);
}

// The look-back lanes' next step, then what the workgroup learns: LOOKBACK_DONE (and in
// wg_prefix what precedes the tile), or the tile to reduce for a fallback. Call from uniform
// control flow.
fn lookback_round(tile: u32, aggregate: T, done: ptr<function, bool>, cursor: ptr<function, u32>,
                  prefix: ptr<function, T>) -> u32 {
  if (is_lookback_lane()) {
    if (!*done) {
      *done = look_back(tile, cursor, prefix);
    }
    if (*done) {
      let inclusive = select(combine(*prefix, aggregate), aggregate, tile == 0u);
      if (tile != 0u && (EXPERIMENT & 128u) == 0u) {
        post_tile(tile, GS_STATE_INCLUSIVE, inclusive);
      }
      if (tile == P.tile_count - 1u && LID == 0u) {
        atomicStore(&control[control_word(WEB_CONTROL_CARRY)], t_bits(inclusive));
      }
      if (LID == 0u) {
        wg_prefix = select(*prefix, init_value(), tile == 0u);
      }
    }
    if (LID == 0u) {
      wg_lookback = select(*cursor, LOOKBACK_DONE, *done);
    }
  }
  return workgroupUniformLoad(&wg_lookback);
}

// The workgroup reduces tile `fallback_tile` and the look-back lanes offer it (insert_fallback).
// Call from uniform control flow.
fn fallback_round(fallback_tile: u32, done: ptr<function, bool>, cursor: ptr<function, u32>,
                  prefix: ptr<function, T>) {
  var reduction = tile_local_scan(fallback_tile, SLOT_FALLBACK);
  if (fallback_tile == 0u) {
    reduction = combine(init_value(), reduction);
  }
  if (is_lookback_lane()) {
    *done = insert_fallback(cursor, prefix, reduction);
  }
}

fn finish_tile(tile: u32) {
  if (STATISTICS && LID == 0u) {
    add_statistics();
  }
  store_tile(tile, wg_prefix);
}
