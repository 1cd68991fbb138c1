// In-place compaction (docs/protocol.md, "In-place compaction"; model/compact_inplace.pml):
// select-if, select-flagged and unique with the output over the input. Kept element k goes
// to rank(k) <= k, so a tile's scatter lands on its own input and that of tiles before it;
// the scan's fallback could publish a tile's count before anyone had read the tile, and a
// successor would then scatter over that unread input. Here whoever counts a tile, owner or
// fallback, claims it with a compare-and-swap after its loads, and only the claim's winner
// (the tile's holder) scatters it; a count is published only from a claim word. The walk
// never holds more than its own tile and one other: a tile that stays not ready is skipped
// (the gap), and tiles from the newest INCLUSIVE one below the gap up to the gap are walked
// in order, each with its prefix known, a window a step: ready and claimed tiles are taken at
// once, the others claimed one at a time.
//
// Ordering (docs/protocol.md, "Ordering"): a release fence between a tile's loads and its
// claim (and the owner's READY post), an acquire-release fence after the spine and claim
// reads a prefix comes from, before any post or scatter that uses it. The fences are at
// queue-family scope and issued only by the invocations that touch the spine and claim words;
// the workgroup barriers between them and the other invocations' loads and stores need only
// workgroup scope ("The Vulkan kernel"). The input is read and written through
// compaction.glsl's nonprivate in-place views.
#ifndef GPUSCAN_IN_PLACE_GLSL
#define GPUSCAN_IN_PLACE_GLSL

#include "interface.h"
#include "compaction_interface.h"
#include "compaction.glsl"
#include "tile_state.glsl"
#include "run_control.glsl"
#include "look_back.glsl"

// The claim words: one 32-bit word a tile after the spine half's tile-state words (16 bytes
// a tile in either tile state), zeroed with them between runs.
layout(binding = GS_BINDING_SPINE_WORDS, std430) buffer ClaimWords {
  uint claim_words[];
};

uint claim_index(uint tile) {
#if GS_PACKED_STATE
  const uint half_start = 2u * pc.spine_base;  // spine_base counts 64-bit words
#else
  const uint half_start = pc.spine_base;
#endif
  return half_start + 4u * pc.tile_count + tile;
}

void release_fence() {
  memoryBarrier(gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, gl_SemanticsRelease);
}
void acquire_release_fence() {
  memoryBarrier(gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease);
}
// A workgroup barrier that also orders every invocation's buffer accesses before it (a
// tile's loads, the fences of the look-back lanes) before those after it. Workgroup memory
// scope is enough: inter-thread-happens-before is transitive across scopes, so an
// invocation's load, this barrier, and a look-back lane's queue-family fence after it order
// the load before whatever the fence releases to other workgroups (and the same the other way
// round, for an acquire before the barrier). At queue-family scope every warp would fence at
// device scope at each barrier: 17% of the in-place time on an H100 (docs/protocol.md, "The
// Vulkan kernel").
void buffer_barrier() {
  controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup,
                 gl_StorageSemanticsBuffer | gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);
}

shared uint wg_claim;

// All invocations, once the up-walk's workgroup has loaded `tile` (unique: with the element
// before it) and counted `count` kept elements: claims the tile for its scatter (the owner
// claims its own tile in compact_in_place, in the look-back lanes). Returns 0 if this
// workgroup now holds the tile, else the claim word, whose count is the tile's (the one just
// counted may come from input a successor had already overwritten, and is thrown away).
uint claim_tile(uint tile, uint count) {
  buffer_barrier();
  if (gl_LocalInvocationIndex == 0) {
    release_fence();
    wg_claim = atomicCompSwap(claim_words[claim_index(tile)], 0u, GS_CLAIMED | count,
                              gl_ScopeQueueFamily, gl_StorageSemanticsNone, gl_SemanticsRelaxed,
                              gl_StorageSemanticsNone, gl_SemanticsRelaxed);
    acquire_release_fence();
  }
  buffer_barrier();
  return wg_claim;
}

// All invocations: writes the `kept` elements of `tile`, which this workgroup holds, from the
// registers select_tile(tile, SLOT_FALLBACK) left them in, from position `tile_prefix` on.
void scatter_claimed(uint tile, uint tile_prefix, uint kept) {
  if (kept_in_place(tile, tile_prefix, kept)) return;
  const uint block = kept_before_subgroup(SLOT_FALLBACK);
  [[unroll]] for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    uint at = tile_prefix + block + owned_offsets[k];
    [[unroll]] for (uint c = 0; c < VECTOR_ELEMENTS; ++c) {
      if ((owned_masks[k] & (1u << c)) != 0) store_kept(at++, owned_vectors[k][c]);
    }
  }
}

// Look-back lanes, past the gap: the newest INCLUSIVE tile below `gap`, read without
// waiting. Returns the tile after it, and in `base` its inclusive value; tile 0 and the
// identity if there is none.
uint newest_inclusive_below(uint gap, out TILE_VALUE base) {
  base = tile_identity();
  uint cursor = gap;  // the tiles below it are still to read
  while (cursor > 0) {
    const TILE_WORD word = read_window(cursor - 1, 0);
    if (STATISTICS) ++step_count;
    const uint state = tile_state(word);
    const TILE_VALUE value = tile_value(word);
    const uint inclusive = first_slot_in(state, GS_STATE_INCLUSIVE);
    if (inclusive < WINDOW) {
      base = reduce_window(value, inclusive, inclusive + 1);
      return cursor - inclusive;
    }
    cursor = cursor > WINDOW ? cursor - WINDOW : 0;
  }
  return 0;
}

shared TILE_VALUE wg_step_prefix;  // the kept elements before wg_step_next
shared uint wg_step_next;        // the tile the up-walk goes on from
shared bool wg_step_claims;      // tile wg_step_next is to be claimed (else: read on)

// Look-back lanes: one step of the up-walk from tile `u`, with `prefix` the kept elements
// before it (docs/protocol.md, "In-place compaction", the up-walk; "The Vulkan kernel"). Reads
// the tile-state word and the claim word of each tile in u..min(gap, u + WINDOW - 1) at once
// (slot s: tile top - s), and takes the run of KNOWN tiles from u on: READY, INCLUSIVE, or
// claimed by someone (the count from the claim word: its holder's, counted from the input it
// read before claiming). The newest INCLUSIVE tile in the run resets the prefix. The run ends
// at the oldest tile that is neither ready nor claimed, which is claimed next. Shares the
// step's outcome through wg_step_*; returns whether this lane posts its word of `tile` as
// INCLUSIVE `inclusive` (the READY and claimed tiles of the run after its newest INCLUSIVE
// one), which it may do only after the barrier and its acquire fence (walk_up).
bool read_up_window(uint u, uint gap, TILE_VALUE prefix, out uint tile, out TILE_VALUE inclusive) {
  const uint top = min(gap, u + WINDOW - 1);
  const uint end = top - u + 1;  // slots [0, end) hold tiles top..u
  const uint slot = window_slot();
  const bool in_window = word_index() == 0 && slot < end;  // tests and counts the tile
  const TILE_WORD word = read_window(top, 0);
  uint claim = 0u;
  if (in_window) {
    claim = atomicLoad(claim_words[claim_index(top - slot)], gl_ScopeQueueFamily,
                       gl_StorageSemanticsNone, gl_SemanticsRelaxed);
  }
  if (STATISTICS) ++step_count;
  const uint state = tile_state(word);
  const TILE_VALUE value = tile_value(word);
  const bool ready = state == GS_STATE_READY || state == GS_STATE_INCLUSIVE;
  // The run is slots [lo, end): the oldest tile that is neither ready nor claimed stops it.
  const uvec4 unknown = subgroupBallot(in_window && !ready && claim == 0u);
  const bool stops = subgroupBallotBitCount(unknown) != 0;
  const uint lo = stops ? subgroupBallotFindMSB(unknown) / WORDS_PER_TILE + 1 : 0u;
  // The newest INCLUSIVE tile in the run (slot hi) gives the base; without one, `prefix`.
  const uint first_of_group = gl_SubgroupInvocationID - sg_lane();
  const uvec4 resets = subgroupBallot(in_window && state == GS_STATE_INCLUSIVE && slot >= lo);
  const bool reset = subgroupBallotBitCount(resets) != 0;
  const uint hi = reset ? subgroupBallotFindLSB(resets) / WORDS_PER_TILE : end;
  const TILE_VALUE reset_value =
      subgroupShuffle(value, first_of_group + min(hi, WINDOW - 1) * WORDS_PER_TILE);
  const TILE_VALUE base = reset ? reset_value : prefix;
  // The counts of the READY and claimed tiles in slots [lo, hi), summed over the slots at or
  // above each lane (older tiles): a Kogge-Stone scan downwards. A window's counts are at
  // most WINDOW tiles of elements, far below 2^32.
  const bool counted = in_window && slot >= lo && slot < hi;
  uint older = counted ? (state == GS_STATE_READY ? uint(value) : claim & ~GS_CLAIMED) : 0u;
  for (uint d = 1; d < SUBGROUP_SIZE; d <<= 1) {
    const uint above = subgroupShuffleDown(older, d);
    if (sg_lane() + d < SUBGROUP_SIZE) older += above;
  }
  const uint total = subgroupShuffle(older, first_of_group);
  const uint own = subgroupShuffle(older, first_of_group + slot * WORDS_PER_TILE);
  if (STATISTICS) {
    // Tiles that needed a claim and had one: fallbacks, as a claim the walk makes itself.
    fallback_count += subgroupBallotBitCount(subgroupBallot(in_window && slot >= lo && !ready));
  }
  acquire_release_fence();  // the window's reads before the posts and the claim they lead to
  if (sg_lane() == 0) {
    wg_step_prefix = base + total;
    wg_step_next = stops ? top - lo + 1 : top + 1;
    wg_step_claims = stops;
  }
  tile = top - slot;
  inclusive = base + own;
  return slot >= lo && slot < hi;
}

// All invocations: the up-walk over tiles [from, gap], from `prefix`, the kept elements
// before tile `from`, a window a step (read_up_window): the known tiles are taken and posted
// INCLUSIVE at once, and the first tile neither ready nor claimed is claimed, scattered at its
// prefix if the claim was won, and posted INCLUSIVE either way (docs/protocol.md, "In-place
// compaction"). Returns the kept elements up to and with `gap`.
TILE_VALUE walk_up(uint from, uint gap, TILE_VALUE prefix) {
  for (uint u = from; u <= gap;) {
    barrier();  // everyone has read the step before's wg_step_*
    bool posts = false;
    uint posted = 0u;
    TILE_VALUE inclusive = 0u;
    if (is_lookback_lane()) posts = read_up_window(u, gap, prefix, posted, inclusive);
    buffer_barrier();
    prefix = wg_step_prefix;
    u = wg_step_next;
    if (is_lookback_lane()) {
      acquire_release_fence();
      if (posts) post_lane_word(posted, GS_STATE_INCLUSIVE, inclusive);
    }
    if (!wg_step_claims) continue;
    // Tile u was neither ready nor claimed when read: the whole workgroup counts it and
    // claims it (a stale 0 in the window: the claim settles it, and a loser takes the count).
    const uint kept = select_tile(u, SLOT_FALLBACK);
    uint claim = claim_tile(u, kept);
    const bool won = claim == 0;
    if (won) {
      scatter_claimed(u, uint(prefix), kept);
      claim = GS_CLAIMED | kept;
    }
    const TILE_VALUE count = TILE_VALUE(claim & ~GS_CLAIMED);
    if (is_lookback_lane()) {
      acquire_release_fence();
      post_tile(u, GS_STATE_INCLUSIVE, prefix + count);
      note_fallback(won);  // a won claim is a fallback's insertion
    }
    prefix += count;
    ++u;
  }
  return prefix;
}

shared uint wg_gap;
shared bool wg_lost;
shared uint wg_from;
shared TILE_VALUE wg_above_gap;  // without a gap: the whole prefix
shared TILE_VALUE wg_below_from;

// The kernel for a tile in place: select_tile and stage_kept as out of place, then the
// claim, the walk, and the scatter of the staged elements.
void compact_in_place(uint tile) {
  // Simulated blocking in place: a blocked owner abandons its tile before reading it (the
  // last tile is never blocked), so its successors' fallbacks must claim and scatter it.
  if (FALLBACK && tile != pc.tile_count - 1 && is_blocked(tile)) return;
  TILE_WORD early = TILE_WORD(GS_STATE_NOT_READY);
  if (is_lookback_lane() && tile != 0) early = read_window(tile - 1, 0);
  const TILE_VALUE kept = TILE_VALUE(select_tile(tile, SLOT_OWN));
  stage_kept(tile);
  buffer_barrier();  // every invocation's loads before the look-back lanes' release fence

  if (is_lookback_lane()) {
    // The owner's claim, in the look-back lanes alone: one release fence covers the claim and
    // the READY post, and the lanes learn the claim's result by a shuffle, so the post waits
    // for no barrier and no acquire (a winner read the cleared word; a loser stores nothing).
    // The other invocations learn of a lost claim at the barrier after the walk.
    release_fence();
    uint claim = 0;
    if (sg_lane() == 0) {
      claim = atomicCompSwap(claim_words[claim_index(tile)], 0u, GS_CLAIMED | uint(kept),
                             gl_ScopeQueueFamily, gl_StorageSemanticsNone, gl_SemanticsRelaxed,
                             gl_StorageSemanticsNone, gl_SemanticsRelaxed);
    }
    // Claimed already: a fallback holds the tile and scatters it, and this workgroup's loads
    // may have seen it overwritten. No post, no walk, no scatter.
    const bool lost = subgroupShuffle(claim, gl_SubgroupInvocationID & ~(SUBGROUP_SIZE - 1)) != 0;
    uint cursor = tile - 1;
    TILE_VALUE prefix = tile_identity();
    bool done = tile == 0;
    uint from = 0;
    TILE_VALUE below_from = tile_identity();
    if (lost) {
      done = true;
    } else if (done) {
      post_tile(tile, GS_STATE_INCLUSIVE, kept);
    } else {
      post_tile(tile, GS_STATE_READY, kept);
      uint early_end;
      TILE_VALUE early_value;
      note_early_window(tile, early, early_end, early_value);
      if (STATISTICS) ++step_count;
      done = look_back(tile, cursor, prefix, early_end, early_value);
      // Not done: tile `cursor` stayed not ready for the walk's patience. It is the gap,
      // skipped, not fallen back on: `prefix` holds the READY tiles above it.
      if (!done) from = newest_inclusive_below(cursor, below_from);
    }
    acquire_release_fence();
    if (sg_lane() == 0) {
      wg_lost = lost;
      wg_gap = done ? NO_TILE : cursor;
      wg_from = from;
      wg_above_gap = prefix;
      wg_below_from = below_from;
    }
  }
  buffer_barrier();
  if (wg_lost) return;
  TILE_VALUE before = wg_above_gap;
  if (wg_gap != NO_TILE) before += walk_up(wg_from, wg_gap, wg_below_from);
  if (is_lookback_lane()) {
    acquire_release_fence();
    if (tile != 0) post_tile(tile, GS_STATE_INCLUSIVE, before + kept);
  }
  if (STATISTICS && is_lookback_lane() && sg_lane() == 0) add_statistics();
  buffer_barrier();
  add_run_count(tile, before, kept);
  write_staged(tile, uint(before), uint(kept));
}

#endif
