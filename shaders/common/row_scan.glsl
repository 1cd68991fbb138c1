// The local scan of one tile of a batched scan (DESIGN 3f), level by level as in
// tile_scan.glsl, but segmented: a value never crosses the start of a row. Each level joins
// a prefix only into the elements whose row began before the level's range; the tile's
// aggregate is its total from its last row start (then it is already the tile's inclusive
// value, docs/protocol.md, "Batched scans"), or of the whole tile. Where rows start is
// arithmetic on the element index (push constants row_length and row_phase), never read.
// The aggregate a tile posts is taken in reduction order, by its owner and by any fallback
// alike (same bits): each thread joins its elements from the tile's last row start on, the
// init value joined to that start, then the lanes scan and one invocation walks the
// subgroups' totals. A fallback thereby reduces instead of running the segmented scan.
// Mirrors src/cuda/kernels/row_tile_scan.cuh.
//
// The loops over a thread's vectors and elements are [[unroll]], whatever the type (a
// segmented reduction's search for its segments' ends aside): left to itself, NVIDIA's
// driver (580, H100) kept the row scan's loops rolled and put the thread's vectors in local
// memory (112 bytes at 128 x 3, 288 at 256 x 6, as GPUSCAN_PIPELINE_STATISTICS reports;
// docs/performance.md, "Batched scans"). The lanes that hold a row start are one ballot,
// so the subgroup level scans the values alone.
#ifndef GPUSCAN_ROW_SCAN_GLSL
#define GPUSCAN_ROW_SCAN_GLSL

#include "interface.h"
#include "types.glsl"
#include "tile_shape.glsl"
#include "monoid.glsl"
#include "subgroup_scan.glsl"
#include "workgroup_scan.glsl"
#include "tile_io.glsl"
#include "tile_scan.glsl"

#extension GL_KHR_shader_subgroup_ballot : require

// Per subgroup entry of wg_partials[SLOT_OWN]: whether a row starts in that subgroup's
// block or an earlier one of the tile (wg_scan_partials_rows makes the flags cumulative).
shared uint wg_row_starts[SUBGROUPS];

// How far element i of the run lies from its row's start. The host keeps row_phase below
// row_length and row_length at most 2^31, so the sum cannot wrap.
uint row_distance(uint i) {
  uint d = i % pc.row_length + pc.row_phase;
  return d >= pc.row_length ? d - pc.row_length : d;
}

// A segmented scan (CSR offsets, DESIGN 3f): the rows are segments of any length, whose
// starts are read from a list (ascending run-local element indices, pc.row_length of
// them, a start repeated for each empty segment there) instead of computed. The owner of a
// tile marks the starts among its elements in a bitmap first (load_segment_bits); a
// fallback needs only the tile's last start, which two binary searches find.
layout(constant_id = GS_SPEC_SEGMENTS) const bool SEGMENTS = false;
layout(binding = GS_BINDING_SEGMENT_STARTS, std430) readonly buffer SegmentStarts {
  uint segment_starts[];
};
// Bit p: element p of the owned tile starts a segment; bit TILE_ELEMENTS: the next tile's
// first element does (where a reduction's last segment of the tile ends). Sized for the
// largest tile (GS_MAX_TILE_ELEMENTS; the host refuses larger segmented tiles): sized by
// TILE_ELEMENTS, llvmpipe (Mesa 22.3) let the array overlap private variables.
const uint SEGMENT_WORDS = SEGMENTS ? GS_MAX_TILE_ELEMENTS / 32 + 1 : 1;
shared uint wg_segment_bits[SEGMENT_WORDS];

// The first entry of the list at or after element x (pc.row_length where none is).
uint segment_lower_bound(uint x) {
  uint lo = 0;
  uint hi = pc.row_length;
  while (lo < hi) {
    const uint mid = (lo + hi) / 2;
    if (segment_starts[mid] < x) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// Marks the owned tile's segment starts in wg_segment_bits (the whole workgroup).
void load_segment_bits(uint tile) {
  const uint first = tile * TILE_ELEMENTS;
  for (uint w = gl_LocalInvocationIndex; w < SEGMENT_WORDS; w += WORKGROUP_SIZE) {
    wg_segment_bits[w] = 0;
  }
  barrier();
  const uint end = first + min(TILE_ELEMENTS, pc.n - first);  // with the next tile's first
  const uint lo = segment_lower_bound(first);
  const uint hi = end < pc.n ? segment_lower_bound(end + 1) : segment_lower_bound(end);
  for (uint j = lo + gl_LocalInvocationIndex; j < hi; j += WORKGROUP_SIZE) {
    const uint p = segment_starts[j] - first;
    // Always true of an ascending list; a list that is not (the caller's-memory API cannot
    // check one) gives wrong segments, never a write outside the bitmap.
    if (p <= end - first) atomicOr(wg_segment_bits[p / 32], 1u << (p % 32));
  }
  barrier();
}

bool owned_bit(uint p) { return ((wg_segment_bits[p / 32] >> (p % 32)) & 1u) != 0; }

// A thread's vectors lie VECTOR_ELEMENTS * SUBGROUP_SIZE elements apart (tile_vector_index),
// so the row distance of its first vector (row_distance, a division) gives every next one
// by an add and a compare with this step, taken modulo the row length once.
uint row_distance_step() { return (VECTOR_ELEMENTS * SUBGROUP_SIZE) % pc.row_length; }
uint next_row_distance(uint d, uint step) {
  d += step;  // both below row_length <= 2^31: no wrap
  return d >= pc.row_length ? d - pc.row_length : d;
}

// The elements of the vector whose first element is element g of the owned tile `tile`
// that start a row or segment, as bits (bit e: element g + e; none at or past n). d:
// row_distance(g) (uniform rows only).
uint vector_row_starts(uint tile, uint g, uint d) {
  if (SEGMENTS) {
    const uint p = g - tile * TILE_ELEMENTS;  // a multiple of the vector's size
    return (wg_segment_bits[p / 32] >> (p % 32)) & ((1u << VECTOR_ELEMENTS) - 1u);
  }
  uint bits = 0;
  [[unroll]] for (uint e = 0; e < VECTOR_ELEMENTS; ++e) {
    if (d == 0 && g + e < pc.n) bits |= 1u << e;
    d = d + 1 == pc.row_length ? 0 : d + 1;
  }
  return bits;
}

// Whether the owned tile's first element starts a row (then it does not look back).
bool tile_starts_row(uint tile) {
  return SEGMENTS ? owned_bit(0) : row_distance(tile * TILE_ELEMENTS) == 0;
}

// The first segment start among elements [lo, lo + count) of the owned tile (tile
// offsets), or lo + count where none is. No early return: llvmpipe (Mesa 22.3) then skipped
// the caller's later stores in some subgroups.
uint first_segment_start_in(uint lo, uint count) {
  uint first = lo + count;
  for (uint p = lo & ~31u; p < lo + count; p += 32) {
    uint w = wg_segment_bits[p / 32];
    if (p < lo) w &= ~0u << (lo - p);
    if (p + 32 > lo + count) w &= (1u << (lo + count - p)) - 1u;
    if (w != 0) first = min(first, p + findLSB(w));
  }
  return first;
}

// The highest hardware lane set in `lanes` (a ballot), or -1 where none is.
int highest_lane(uvec4 lanes) {
  if (gl_SubgroupSize <= 32) return findMSB(lanes.x);
  for (int c = 3; c >= 0; --c) {
    if (lanes[c] != 0) return 32 * c + findMSB(lanes[c]);
  }
  return -1;
}

// The hardware lanes below lane `i`, as a ballot.
uvec4 lanes_below(uint i) {
  uvec4 lanes;
  [[unroll]] for (uint c = 0; c < 4; ++c) {
    lanes[c] = i >= 32 * c + 32 ? ~0u : (i <= 32 * c ? 0u : (1u << (i - 32 * c)) - 1u);
  }
  return lanes;
}

// Segmented Kogge-Stone over the logical subgroup: lane l joins its lower neighbours'
// values only from `head` on, the highest hardware lane at or below l whose range holds a
// row start (-1: none), so it ends with lanes [max(head, subgroup's first), l] combined.
T sg_segmented_scan(T x, int head) {
  const int lane = int(gl_SubgroupInvocationID);
  [[unroll]] for (uint d = 1; d < SUBGROUP_SIZE; d <<= 1) {
    const T y = subgroupShuffleUp(x, d);
    if (sg_lane() >= d && lane - int(d) >= head) x = combine(y, x);
  }
  return x;
}

// Where the aggregate of `tile` begins: whether a row starts among its elements below n,
// and if so the last such start (an element index of the run).
bool last_row_start(uint tile, out uint at) {
  const uint first = tile * TILE_ELEMENTS;
  if (SEGMENTS) {
    const uint hi = segment_lower_bound(first + min(TILE_ELEMENTS, pc.n - first));
    const bool starts = hi > 0 && segment_starts[hi - 1] >= first;
    at = starts ? segment_starts[hi - 1] : 0;
    return starts;
  }
  const uint last = first + min(TILE_ELEMENTS, pc.n - first) - 1;
  const uint d = row_distance(last);
  at = last - d;
  return d <= last - first;
}

// Thread level of the reduction order: joins the elements of vector `v` (its first at
// element index g) that count towards the aggregate into `total`.
void add_to_row_total(inout T total, TV v, uint g, bool has_start, uint start, T row_init) {
  [[unroll]] for (uint e = 0; e < VECTOR_ELEMENTS; ++e) {
    T x = v[e];
    if (has_start && g + e == start) x = combine(row_init, x);
    if (!has_start || g + e >= start) total = combine(total, x);
  }
}

// One invocation's walk of the subgroups' totals in slot `slot`, in order: each entry
// becomes the running total (the workgroup level of the reduction order).
void walk_totals(uint slot) {
  const uint base = slot * SUBGROUPS;
  T running = identity();
  for (uint s = 0; s < SUBGROUPS; ++s) {
    running = combine(running, wg_partials[base + s]);
    wg_partials[base + s] = running;
  }
}

// Scans wg_partials[SLOT_OWN] segmented by wg_row_starts (both in place; the flags become
// cumulative) and, with `reduction`, walks the reduction-order totals in SLOT_FALLBACK. Few
// entries (a tile's subgroups): one invocation walks them.
void wg_scan_partials_rows(bool reduction) {
  const uint base = SLOT_OWN * SUBGROUPS;
  barrier();
  if (gl_LocalInvocationIndex == 0) {
    T running = identity();
    bool seen = false;
    for (uint s = 0; s < SUBGROUPS; ++s) {
      const bool starts = wg_row_starts[base + s] != 0;
      running = starts ? wg_partials[base + s] : combine(running, wg_partials[base + s]);
      seen = seen || starts;
      wg_partials[base + s] = running;
      wg_row_starts[base + s] = seen ? 1 : 0;
    }
    if (reduction) walk_totals(SLOT_FALLBACK);
  }
  barrier();
}

// Scans this thread's `loaded` vectors of its own `tile` segmented by rows: each subgroup's
// block row by row, then the subgroups' totals. The vectors are kept for store_tile_rows,
// each element from its row's start or from the subgroup block's start, whichever is
// later. Returns the tile's aggregate: for integers the segmented scan's total, for floats
// the reduction-order total, computed beside it (integers give the same bits in any
// order); `starts`: whether a row starts in the tile (both uniform across the workgroup).
T scan_loaded_rows(inout TV loaded[VECTORS_PER_THREAD], uint tile, T row_init, out bool starts) {
  const bool reduction_order = T_IS_FLOAT != 0;
  uint start;
  const bool has_start = last_row_start(tile, start);
  T reduction = identity();  // floats: this thread's part of the reduction-order total
  T carry = identity();      // the subgroup's block so far, from its last row start
  bool block_starts = false;
  const uint step = SEGMENTS ? 0 : row_distance_step();
  uint d = SEGMENTS ? 0 : row_distance(VECTOR_ELEMENTS * tile_vector_index(tile, 0));
  [[unroll]] for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    const uint g = VECTOR_ELEMENTS * tile_vector_index(tile, k);
    TV v = loaded[k];
    if (reduction_order) add_to_row_total(reduction, v, g, has_start, start, row_init);
    // Thread level, segmented: a row start takes the init value and begins anew.
    const uint start_bits = vector_row_starts(tile, g, d);
    if (!SEGMENTS) d = next_row_distance(d, step);
    const uint first_start = start_bits == 0 ? VECTOR_ELEMENTS : findLSB(start_bits);
    [[unroll]] for (uint e = 0; e < VECTOR_ELEMENTS; ++e) {
      if (((start_bits >> e) & 1u) != 0) {
        v[e] = combine(row_init, v[e]);
      } else if (e > 0) {
        v[e] = combine(v[e - 1], v[e]);
      }
    }
    // Subgroup level: row k of the block across the lanes.
    // Which lanes hold a row start, as one ballot instead of flags scanned beside the
    // values; `first_lane`: the logical subgroup's first hardware lane.
    const uvec4 start_lanes = subgroupBallot(first_start < VECTOR_ELEMENTS);
    const int first_lane = int(gl_SubgroupInvocationID - sg_lane());
    const T inclusive =
        sg_segmented_scan(vector_last(v), highest_lane(start_lanes & gl_SubgroupLeMask));
    const T previous = subgroupShuffleUp(inclusive, 1);
    const bool starts_before = highest_lane(start_lanes & gl_SubgroupLtMask) >= first_lane;
    // What precedes this lane's elements before its first row start: the lanes since the
    // row's start, and the rows before this one if the row began before them.
    T lane_prefix = carry;
    if (sg_lane() != 0) lane_prefix = starts_before ? previous : combine(carry, previous);
    const T last = sg_last(inclusive);
    const bool row_starts =
        highest_lane(start_lanes & lanes_below(first_lane + SUBGROUP_SIZE)) >= first_lane;
    carry = row_starts ? last : combine(carry, last);
    block_starts = block_starts || row_starts;
    [[unroll]] for (uint e = 0; e < VECTOR_ELEMENTS; ++e) {
      if (e < first_start) v[e] = combine(lane_prefix, v[e]);
    }
    tile_vectors[k] = v;
  }
  if (reduction_order) reduction = sg_inclusive_scan(reduction);
  if (sg_lane() == SUBGROUP_SIZE - 1) {
    wg_partials[SLOT_OWN * SUBGROUPS + sg_id()] = carry;
    wg_row_starts[SLOT_OWN * SUBGROUPS + sg_id()] = block_starts ? 1 : 0;
    if (reduction_order) wg_partials[SLOT_FALLBACK * SUBGROUPS + sg_id()] = reduction;
  }
  wg_scan_partials_rows(reduction_order);
  starts = wg_row_starts[SLOT_OWN * SUBGROUPS + SUBGROUPS - 1] != 0;
  return wg_partials[(reduction_order ? SLOT_FALLBACK : SLOT_OWN) * SUBGROUPS + SUBGROUPS - 1];
}

// Scans a tile of a batched scan that holds no row start as a plain tile (scan_loaded):
// nothing in it is segmented, so the segmented machinery is paid only where a row starts.
// Its aggregate is the one tile_reduce_rows gets: for integers the plain scan's total, for
// floats the reduction-order total, computed beside it in SLOT_FALLBACK.
T scan_loaded_row_free(inout TV loaded[VECTORS_PER_THREAD]) {
  if (T_IS_FLOAT == 0) return scan_loaded(loaded, SLOT_OWN);
  T total = identity();
  [[unroll]] for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    [[unroll]] for (uint e = 0; e < VECTOR_ELEMENTS; ++e) total = combine(total, loaded[k][e]);
  }
  total = sg_inclusive_scan(total);
  if (sg_lane() == SUBGROUP_SIZE - 1) wg_partials[SLOT_FALLBACK * SUBGROUPS + sg_id()] = total;
  scan_loaded(loaded, SLOT_OWN);  // its barriers publish the totals above too
  if (gl_LocalInvocationIndex == 0) walk_totals(SLOT_FALLBACK);
  barrier();
  return wg_partials[SLOT_FALLBACK * SUBGROUPS + SUBGROUPS - 1];
}

// A fallback's reduction of `tile`: the aggregate its owner's scan_loaded_rows posts, in
// the same reduction order, in SLOT_FALLBACK. `starts`: whether a row starts in the tile.
T tile_reduce_rows(uint tile, T row_init, out bool starts) {
  TV loaded[VECTORS_PER_THREAD];
  load_thread_vectors(tile, loaded);
  uint start;
  starts = last_row_start(tile, start);
  T total = identity();
  [[unroll]] for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    add_to_row_total(total, loaded[k], VECTOR_ELEMENTS * tile_vector_index(tile, k), starts,
                     start, row_init);
  }
  total = sg_inclusive_scan(total);
  if (sg_lane() == SUBGROUP_SIZE - 1) wg_partials[SLOT_FALLBACK * SUBGROUPS + sg_id()] = total;
  barrier();
  if (gl_LocalInvocationIndex == 0) walk_totals(SLOT_FALLBACK);
  barrier();
  return wg_partials[SLOT_FALLBACK * SUBGROUPS + SUBGROUPS - 1];
}

// A segmented reduction's empty segments from entry j on that start (and end) at element
// `at`: their total is the init value. Each is written beside the end of the segment
// before it (or, before the run's first element, by that element), so that none is missed.
void store_empty_segments(uint j, uint at, T row_init) {
  while (j + 1 < pc.row_length && segment_starts[j] == at && segment_starts[j + 1] == at) {
    out_scalars[pc.out_shift + j] = row_init;
    ++j;
  }
}

// A reduction's outputs in the vector `v` (its first element is element g of the owned
// tile, each element scanned from its row's start): each row's total, by its last
// element. Uniform rows are counted from the row of the run's element 0; a segment's
// output is that of its entry j in the list (out_shift - 1 for the segment open at the run's
// start). A segmented run's row_phase is a margin m: only entries m - 1 <= j <= length - 1
// - m are written. A Scanner's chunk passes 0 (it writes the segments open at its start and
// its end); the caller's-memory API passes 1: its list is the application's offsets, 0 to
// n, so every segment lies between two entries, and nothing outside its outputs is written
// even where the list is not that (store_empty_segments keeps to j <= length - 2 anyway).
void store_row_totals(uint tile, uint g, TV v, T row_init) {
  if (SEGMENTS) {
    for (uint e = 0; e < VECTOR_ELEMENTS; ++e) {
      const uint i = g + e;
      if (i == 0) store_empty_segments(0, 0, row_init);
      if (i < pc.n && (i == pc.n - 1 || owned_bit(i + 1 - tile * TILE_ELEMENTS))) {
        const uint after = segment_lower_bound(i + 1);  // j + 1: the entries at or before i
        if (after >= pc.row_phase && after <= pc.row_length - pc.row_phase) {
          out_scalars[pc.out_shift + after - 1] = v[e];  // j = -1 wraps to out_shift - 1
        }
        store_empty_segments(after, i + 1, row_init);
      }
    }
    return;
  }
  // Row of g: g / L, one more where the phase carries g past a row end.
  uint row = g / pc.row_length + (g % pc.row_length + pc.row_phase >= pc.row_length ? 1 : 0);
  uint d = row_distance(g);
  [[unroll]] for (uint e = 0; e < VECTOR_ELEMENTS; ++e) {
    if (g + e < pc.n && (d == pc.row_length - 1 || g + e == pc.n - 1)) {
      out_scalars[pc.out_shift + row] = v[e];  // the run's rows start at out_shift
    }
    if (++d == pc.row_length) {
      d = 0;
      ++row;
    }
  }
}

// Writes the owned tile of a batched scan, whose predecessors in the row of its first
// element reduce to `tile_prefix`: per element its inclusive or exclusive scan within its
// row, or for a reduction each row's total, by the row's last element (rows counted from
// the row of the run's element 0).
void store_tile_rows(uint tile, T tile_prefix, T row_init) {
  const uint s = sg_id();
  const uint at = SLOT_OWN * SUBGROUPS + s;
  // What precedes the elements whose row began before this subgroup's block: the blocks
  // since that row's start, and the tile's prefix if the row began before the tile.
  const T block_prefix = s == 0 ? identity() : wg_partials[at - 1];
  const bool row_before_tile = s == 0 || wg_row_starts[at - 1] == 0;
  const T open_prefix = row_before_tile ? combine(tile_prefix, block_prefix) : block_prefix;
  const uint tile_first = tile * TILE_ELEMENTS;
  const uint block_first =
      VECTOR_ELEMENTS * (tile * TILE_VECTORS + sg_id() * VECTORS_PER_THREAD * SUBGROUP_SIZE);
  // Segments: the block's elements before its first segment start are in the open row.
  const uint block_elements = VECTOR_ELEMENTS * VECTORS_PER_THREAD * SUBGROUP_SIZE;
  const uint open_end =
      SEGMENTS ? tile_first + first_segment_start_in(block_first - tile_first, block_elements) : 0;
  T before = open_prefix;  // exclusive: the inclusive value of the element before a vector
  const bool full = is_full_tile(tile);
  const uint step = SEGMENTS ? 0 : row_distance_step();
  uint next_d = SEGMENTS ? 0 : row_distance(VECTOR_ELEMENTS * tile_vector_index(tile, 0));
  [[unroll]] for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    const uint index = tile_vector_index(tile, k);
    const uint g = VECTOR_ELEMENTS * index;
    const uint d0 = next_d;  // row_distance(g)
    if (!SEGMENTS) next_d = next_row_distance(next_d, step);
    const uint row_starts = vector_row_starts(tile, g, d0);
    TV v = tile_vectors[k];
    if (SEGMENTS) {
      [[unroll]] for (uint e = 0; e < VECTOR_ELEMENTS; ++e) {
        if (g + e < open_end) v[e] = combine(open_prefix, v[e]);
      }
    } else {
      // Only elements before the vector's first row start can have begun before the block.
      const bool began_before_block = d0 > g - block_first;
      const uint to_start = d0 == 0 ? 0 : pc.row_length - d0;
      [[unroll]] for (uint e = 0; e < VECTOR_ELEMENTS; ++e) {
        if (began_before_block && e < to_start) v[e] = combine(open_prefix, v[e]);
      }
    }
    if (KIND == GS_KIND_REDUCE) {
      store_row_totals(tile, g, v, row_init);
      continue;
    }
    if (KIND == GS_KIND_EXCLUSIVE) {
      const T previous_lane = subgroupShuffleUp(vector_last(v), 1);
      if (sg_lane() != 0) before = previous_lane;
      TV shifted = shift_in(before, v);
      [[unroll]] for (uint e = 0; e < VECTOR_ELEMENTS; ++e) {
        if (((row_starts >> e) & 1u) != 0) shifted[e] = row_init;
      }
      store_tile_vector(full, index, shifted);
      before = sg_last(vector_last(v));
    } else {
      store_tile_vector(full, index, v);
    }
  }
}

#endif
