// The compaction kernels' tile level (DESIGN 3e): which elements of a tile are kept, where
// each kept one goes within the tile, and the tile's count. The tile value these kernels
// post through tile_state.glsl and look_back.glsl is a 64-bit count under addition (for
// run-length encoding, a count and a position: see count_combine), so this file must come
// before those two.
//
// The owner of a tile and a fallback on it both call select_tile, so a fallback's count is
// the owner's, bit for bit (an integer sum is the same in any order).
#ifndef GPUSCAN_COMPACTION_GLSL
#define GPUSCAN_COMPACTION_GLSL

#extension GL_KHR_memory_scope_semantics : require  // the in-place views are `nonprivate`
// Staged positions as 16-bit variables: modules of their own (`*_int16`, shaders/CMakeLists.txt)
// for devices with shaderInt16 (below, "staged positions").
#ifndef GS_POSITIONS_16
#define GS_POSITIONS_16 0
#endif
#if GS_POSITIONS_16
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#endif

#ifdef GPUSCAN_TILE_STATE_GLSL
#error "compaction.glsl defines the tile value: include it before tile_state.glsl"
#endif

#include "interface.h"
#include "compaction_interface.h"
#include "types.glsl"
#include "tile_shape.glsl"
#include "subgroup_scan.glsl"
#ifdef GPUSCAN_TILE_INPUT_GLSL
#error "compaction.glsl places the input's elements: include it before tile_input.glsl"
#endif
#define GS_INPUT_SCALARS_BINDING GS_COMPACT_BINDING_INPUT_SCALARS
#include "tile_input.glsl"

layout(constant_id = GS_SPEC_COMPACTION) const uint COMPACTION = 0;
const uint OPERATION = COMPACTION & 15u;
const uint PREDICATE = (COMPACTION >> 4) & 15u;
const uint FLAG_WORDS = (COMPACTION >> 8) & 15u;
// Run-length encoding is a build of its own (GS_COMPACT_RUNS: its tile value is two words);
// the host runs its operation only there.
#ifndef GS_COMPACT_RUNS
#define GS_COMPACT_RUNS 0
#endif
const bool RLE = GS_COMPACT_RUNS != 0;
// Outputs beyond one binding are a build of their own too (GS_COMPACT_WIDE: docs/protocol.md,
// "Compaction in chunks"): it writes them through 64-bit buffer device addresses, which only
// a device with bufferDeviceAddress may even load, so the one-binding builds stay free of them.
#ifndef GS_COMPACT_WIDE
#define GS_COMPACT_WIDE 0
#endif
#if GS_COMPACT_WIDE
#extension GL_EXT_buffer_reference : require
// An output position: 64-bit where the outputs may hold more than 2^32 elements.
#define OUT_INDEX uint64_t
#else
#define OUT_INDEX uint
#endif
// Which operations read flags, and which write the rejected elements to a second output.
const bool FLAGGED =
    OPERATION == GS_COMPACT_SELECT_FLAGGED || OPERATION == GS_COMPACT_PARTITION_FLAGGED;
const bool PARTITION =
    OPERATION == GS_COMPACT_PARTITION || OPERATION == GS_COMPACT_PARTITION_FLAGGED;
// The output is the input (select and unique: docs/protocol.md, "In-place compaction").
const bool IN_PLACE = ((COMPACTION >> 12) & 1u) != 0;
// The rows' packed counts in 16-bit fields even where 8 bits hold them (a test's choice:
// compaction_interface.h).
const bool WIDE_ROW_COUNTS = (COMPACTION & GS_COMPACTION_WIDE_ROW_COUNTS) != 0;

// A tile's value. For every operation but run-length encoding, the count of kept elements:
// 32 bits, as a run's counts stay below 2^32 (CompactionKernels::max_elements keeps n there;
// more is done in chunks; the count buffer and the carry hold 64 bits), so that the tile
// state takes one word a tile as the 32-bit scans' does: with two words a tile every
// operation ran 9-13% slower on an H100 (docs/performance.md, K23).
//
// Run-length encoding's tile value: the count in the low word and the position of the
// tile's last head (first element of a run) in the high word, NO_HEAD if it holds none;
// combining adds the counts and keeps the later head. So a tile's exclusive prefix also
// says where the run open at the tile's start began, and no tile waits on a successor for
// a run's length (write_run_lengths). Counts and positions within a run are below 2^32
// (pc.n is), and no position is NO_HEAD (max_elements keeps n below 2^32 - a tile).
const uint NO_HEAD = 0xFFFFFFFFu;
#if GS_COMPACT_RUNS
#define TILE_VALUE uint64_t
#define TILE_VALUE_WORDS 2
#define tile_value_to_words unpackUint2x32
#define tile_value_from_words packUint2x32
uint64_t count_identity() { return packUint2x32(uvec2(0u, NO_HEAD)); }
uint64_t count_combine(uint64_t earlier, uint64_t later) {
  const uvec2 e = unpackUint2x32(earlier);
  const uvec2 l = unpackUint2x32(later);
  return packUint2x32(uvec2(e.x + l.x, l.y != NO_HEAD ? l.y : e.y));
}
// The number of kept elements a tile value stands for, and the last head it holds.
uint count_of(uint64_t value) { return unpackUint2x32(value).x; }
uint last_head_of(uint64_t value) { return unpackUint2x32(value).y; }
#else
#define TILE_VALUE uint
#define TILE_VALUE_WORDS 1
uvec2 count_to_words(uint count) { return uvec2(count, 0u); }
uint count_from_words(uvec2 words) { return words.x; }
#define tile_value_to_words count_to_words
#define tile_value_from_words count_from_words
uint count_identity() { return 0u; }
uint count_combine(uint earlier, uint later) { return earlier + later; }
uint count_of(uint value) { return value; }
uint last_head_of(uint value) { return NO_HEAD; }
#endif
#define tile_identity count_identity
#define tile_combine count_combine

// The input: in_vectors and in_scalars (tile_input.glsl).
layout(binding = GS_COMPACT_BINDING_OUTPUT, std430) writeonly buffer Output {
  T out_scalars[];
};
// The flags of select-flagged and partition-flagged.
layout(binding = GS_COMPACT_BINDING_FLAGS, std430) readonly buffer Flags {
  uint flag_words[];
};
// Partition's rejected elements (written).
layout(binding = GS_COMPACT_BINDING_AUX, std430) writeonly buffer Rejected {
  uint rejected_words[];
};
// The same binding as run-length encoding's lengths (written).
layout(binding = GS_COMPACT_BINDING_AUX, std430) writeonly buffer RunLengths {
  uint64_t run_lengths[];
};
layout(binding = GS_COMPACT_BINDING_COUNT, std430) buffer Count {
  uint count_words[];
};
// In place, the input is read and the kept elements written through these views of the
// output binding (the same buffer as the input's). `nonprivate`, so that the claim's fences
// order a holder's loads before the scatters over them under the Vulkan memory model: a read
// is location-ordered before a write of another invocation when both are non-private and the
// read happens-before the write (docs/protocol.md, "Memory model assumptions"). No
// availability or visibility operation is needed for that, so not `coherent`, whose
// per-access ones bought nothing measurable (docs/protocol.md, "The Vulkan kernel"). Unused
// otherwise, so the other kernels keep their read-only input.
layout(binding = GS_COMPACT_BINDING_OUTPUT, std430) nonprivate buffer InPlaceVectors {
  TV in_place_vectors[];
};
layout(binding = GS_COMPACT_BINDING_OUTPUT, std430) nonprivate buffer InPlaceScalars {
  T in_place_scalars[];
};
TV input_vector(uint v) { return IN_PLACE ? in_place_vectors[v] : in_vectors[v]; }
T input_scalar(uint i) { return IN_PLACE ? in_place_scalars[i] : in_scalars[i]; }

#if GS_COMPACT_WIDE
// Stores x at position i of the kept elements (which = 0) or of the second output (1); below,
// after the carry's binding.
void store_element(uint which, OUT_INDEX i, T x);
#endif
void store_kept(OUT_INDEX i, T x) {
  if (IN_PLACE) {
    in_place_scalars[uint(i)] = x;  // never the wide build: in place is one run, one binding
  } else {
#if GS_COMPACT_WIDE
    store_element(0, i, x);
#else
    out_scalars[i] = x;
#endif
  }
}

// Compaction in chunks (docs/protocol.md, "Compaction in chunks"): the carry the chunk before
// left (compaction_interface.h), read by every workgroup, and the one this chunk leaves for
// the next, written by its last tile. A run with no chunk before it reads nothing. The wide
// build also finds the outputs' device addresses here, after the two slots.
layout(binding = GS_COMPACT_BINDING_CARRY, std430) buffer ChunkCarry {
  uint carry_words[];
};
#if !GS_COMPACT_WIDE
uint chunk_start() { return pc.row_length; }
#endif
bool has_carry() { return pc.row_phase != 0u; }
uint carried_word(uint word) {
  return carry_words[((pc.row_phase + 1u) & 1u) * GS_CARRY_WORDS + word];
}
uint64_t carried_value(uint word) {
  return packUint2x32(uvec2(carried_word(word), carried_word(word + 1u)));
}
// The kept elements before the chunk, and (wide build; above: chunk_start) the chunk's first
// element: in the one-binding builds below 2^32 (the kept ones are at most the first element,
// and the chunk ends within the binding: CompactionKernels::binding_holds), in the wide build
// 64-bit.
#if GS_COMPACT_WIDE
uint64_t chunk_base() { return has_carry() ? carried_value(GS_CARRY_COUNT) : 0ul; }
uint64_t chunk_start() { return packUint2x32(uvec2(pc.row_length, pc.lead_hi)); }

// The outputs as 64-bit pointers: each store converts its own address (a uint64 position
// times the element's bytes, so that no 32-bit index, which SPIR-V's access chains take as
// signed, limits it).
#if T_WORDS == 2
layout(buffer_reference, std430, buffer_reference_align = 8) writeonly buffer ElementAt {
  T element;
};
#else
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer ElementAt {
  T element;
};
#endif
layout(buffer_reference, std430, buffer_reference_align = 8) writeonly buffer LengthAt {
  uint64_t value;
};
// The outputs' addresses, read once before the stores (load_output_addresses): a store through
// a pointer might alias the carry's words, so an address read at each store would be read again.
uint64_t output_addresses[2];
void load_output_addresses() {
  [[unroll]] for (uint k = 0; k < 2; ++k) {
    const uint word = GS_COMPACT_OUTPUT_ADDRESS + 2 * k;
    output_addresses[k] = packUint2x32(uvec2(carry_words[word], carry_words[word + 1u]));
  }
}
void store_element(uint which, OUT_INDEX i, T x) {
  ElementAt(output_addresses[which] + i * uint64_t(T_WORDS * 4)).element = x;
}
#else
uint chunk_base() { return has_carry() ? carried_word(GS_CARRY_COUNT) : 0u; }
#endif
T carried_last_element() {
  return t_from_words(uvec2(carried_word(GS_CARRY_LAST_ELEMENT),
                            carried_word(GS_CARRY_LAST_ELEMENT + 1u)));
}
void write_carried_value(uint word, uint64_t value) {
  const uint at = (pc.row_phase & 1u) * GS_CARRY_WORDS + word;
  const uvec2 words = unpackUint2x32(value);
  carry_words[at] = words.x;
  carry_words[at + 1u] = words.y;
}

// select-if's constant.
T predicate_constant() { return t_from_words(uvec2(pc.init_lo, pc.init_hi)); }

bool satisfies(T x) {
  const T c = predicate_constant();
  switch (PREDICATE) {
    case GS_PREDICATE_LT: return x < c;
    case GS_PREDICATE_LE: return x <= c;
    case GS_PREDICATE_GT: return x > c;
    case GS_PREDICATE_GE: return x >= c;
    case GS_PREDICATE_EQ: return x == c;
    default: return x != c;
  }
}

bool is_flagged(uint i) {
  uint word = flag_words[FLAG_WORDS * i];
  if (FLAG_WORDS == 2) word |= flag_words[FLAG_WORDS * i + 1];
  return word != 0;
}

bool is_full_tile(uint tile) { return tile < pc.n / TILE_ELEMENTS; }
const uint ELEMENTS_PER_THREAD = VECTORS_PER_THREAD * VECTOR_ELEMENTS;

TV load_vector(bool full, uint v) {
  const uint first = VECTOR_ELEMENTS * v;
  if (full || first + VECTOR_ELEMENTS <= pc.n) return input_vector(v);
  TV x = TV(0);
  [[unroll]] for (uint c = 0; c < VECTOR_ELEMENTS; ++c) {
    if (first + c < pc.n) x[c] = input_scalar(first + c);
  }
  return x;
}

// Which elements of vector v (bit c: element c), holding `x`, are kept; `before` is the
// element before the vector (unique only).
uint keep_mask(uint v, TV x, T before) {
  const uint first = VECTOR_ELEMENTS * v;
  uint mask = 0;
  [[unroll]] for (uint c = 0; c < VECTOR_ELEMENTS; ++c) {
    const uint i = first + c;
    bool keep;
    if (OPERATION == GS_COMPACT_SELECT_IF || OPERATION == GS_COMPACT_PARTITION) {
      keep = satisfies(x[c]);
    } else if (FLAGGED) {
      keep = i < pc.n && is_flagged(i);
    } else {
      // A chunk's element 0 compares with the chunk before's last (select_tile's `before`).
      keep = (i == 0 && !has_carry()) || x[c] != (c == 0 ? before : x[c - 1]);
    }
    if (keep && i < pc.n) mask |= 1u << c;
  }
  return mask;
}

// Subgroup level, on counts: inclusive sum over the logical subgroup, and its last lane's.
uint count_inclusive_sum(uint x) {
  [[unroll]] for (uint d = 1; d < SUBGROUP_SIZE; d <<= 1) {
    const uint y = subgroupShuffleUp(x, d);
    if (sg_lane() >= d) x += y;
  }
  return x;
}
uint count_of_last_lane(uint x) {
  return subgroupShuffle(x, gl_SubgroupInvocationID | (SUBGROUP_SIZE - 1));
}
uint max_over_lanes(uint x) {
  [[unroll]] for (uint d = 1; d < SUBGROUP_SIZE; d <<= 1) x = max(x, subgroupShuffleXor(x, d));
  return x;
}

// Per subgroup, kept elements of its block: slot SLOT_OWN for the owned tile, SLOT_FALLBACK
// for a fallback's count of another tile (as workgroup_scan.glsl's partials).
#define SLOT_OWN 0
#define SLOT_FALLBACK 1
shared uint wg_kept[2 * SUBGROUPS];
// Run-length encoding, per slot as wg_kept: 1 + the position of each subgroup's last head in
// its block (0: none).
shared uint wg_last_head[RLE ? 2 * SUBGROUPS : 1];

// What scan_kept finds for each slot, in every invocation: the kept elements of the subgroups
// before this one, of the whole tile, and (run-length encoding) 1 + the position of the tile's
// last head (0: none). Private variables, one set a slot (an array indexed by the slot could
// land in local memory).
uint own_kept_before = 0u, own_kept_total = 0u, own_last_head = 0u;
uint fallback_kept_before = 0u, fallback_kept_total = 0u, fallback_last_head = 0u;

// Scans the subgroups' counts in wg_kept[slot] (and finds the tile's last head) in every
// subgroup at once, each keeping what it needs in registers. Nothing is written back, so one
// barrier does: the next writes to the slot's words come after later barriers (the look-back
// loop's, or another tile's). The second barrier, after subgroup 0 wrote the sums back, is
// gone: alone within 0.5% on an H100, with K33's other changes 1-4% (docs/performance.md K33).
void scan_kept(uint slot) {
  barrier();
  uint carry = 0;
  uint last_head = 0;
  uint before = 0;
  // Subgroup s's count lies in lane s - base of the pass over subgroups [base, base + size).
  const uint lane_base = gl_SubgroupInvocationID & ~(SUBGROUP_SIZE - 1u);
  for (uint base = 0; base < SUBGROUPS; base += SUBGROUP_SIZE) {
    const uint s = base + sg_lane();
    const uint x = s < SUBGROUPS ? wg_kept[slot * SUBGROUPS + s] : 0u;
    const uint inclusive = carry + count_inclusive_sum(x);
    const uint exclusive =
        subgroupShuffle(inclusive - x, lane_base | ((sg_id() - base) & (SUBGROUP_SIZE - 1u)));
    if (sg_id() >= base && sg_id() < base + SUBGROUP_SIZE) before = exclusive;
    carry = count_of_last_lane(inclusive);
    if (RLE) {
      last_head =
          max(last_head, max_over_lanes(s < SUBGROUPS ? wg_last_head[slot * SUBGROUPS + s] : 0u));
    }
  }
  if (slot == SLOT_OWN) {
    own_kept_before = before;
    own_kept_total = carry;
    own_last_head = last_head;
  } else {
    fallback_kept_before = before;
    fallback_kept_total = carry;
    fallback_last_head = last_head;
  }
}
uint kept_before_subgroup(uint slot) {
  return slot == SLOT_OWN ? own_kept_before : fallback_kept_before;
}
uint kept_in_tile(uint slot) { return slot == SLOT_OWN ? own_kept_total : fallback_kept_total; }
uint tile_last_head_plus_one(uint slot) {
  return slot == SLOT_OWN ? own_last_head : fallback_last_head;
}

// What select_tile leaves for the owner's stage_kept: its vectors, which of their elements are
// kept, and where the first kept one of each goes within the subgroup's block. In place, a
// fallback's too, for the scatter of a tile it claimed (scatter_claimed in in_place.glsl):
// the owned tile is staged by then.
TV owned_vectors[VECTORS_PER_THREAD];
uint owned_masks[VECTORS_PER_THREAD];
uint owned_offsets[VECTORS_PER_THREAD];

// Loads `tile`, decides which elements are kept and returns how many (uniform across the
// workgroup). For SLOT_OWN (in place: any slot) the vectors, masks and offsets are kept for
// stage_kept.
uint select_tile(uint tile, uint slot) {
  const bool full = is_full_tile(tile);
  TV loaded[VECTORS_PER_THREAD];
  uint masks[VECTORS_PER_THREAD];
  [[unroll]] for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    loaded[k] = load_vector(full, tile_vector_index(tile, k));
  }
  uint rows[VECTORS_PER_THREAD];
  uint last_head = 0;  // run-length encoding: 1 + the position of this thread's last head
  [[unroll]] for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    T before = T(0);
    if (OPERATION == GS_COMPACT_UNIQUE || RLE) {
      // The element before lane l's vector is lane l-1's last. Lane 0's is the last lane's last
      // of the row before (a subgroup's rows follow one another: tile_vector_index), or for
      // its first row the block (or tile) before's, read from memory, where it is pure input:
      // one read a subgroup, not one a row (as CUDA's keep_masks; docs/performance.md K33).
      before = subgroupShuffleUp(loaded[k][VECTOR_ELEMENTS - 1], 1);
      const uint v = tile_vector_index(tile, k);
      T row_before = T(0);
      if (k > 0) {  // unrolled: known at compile time
        row_before = subgroupShuffle(loaded[k > 0 ? k - 1 : 0][VECTOR_ELEMENTS - 1],
                                     gl_SubgroupInvocationID | (SUBGROUP_SIZE - 1));
      }
      if (k > 0 && sg_lane() == 0) {
        before = row_before;
      } else if (sg_lane() == 0 && v != 0 && VECTOR_ELEMENTS * v <= pc.n) {
        before = input_scalar(VECTOR_ELEMENTS * v - 1);
      } else if (sg_lane() == 0 && v == 0 && has_carry()) {
        before = carried_last_element();
      }
    }
    masks[k] = keep_mask(tile_vector_index(tile, k), loaded[k], before);
    rows[k] = bitCount(masks[k]);
    if (RLE && masks[k] != 0) {
      last_head = max(last_head, VECTOR_ELEMENTS * tile_vector_index(tile, k) +
                                     uint(findMSB(masks[k])) + 1);
    }
  }
  if (RLE) {
    last_head = max_over_lanes(last_head);
    if (sg_lane() == 0) wg_last_head[slot * SUBGROUPS + sg_id()] = last_head;
  }
  // Row k of the block: the lanes' counts summed across the lanes. A row's total over the
  // subgroup is at most SUBGROUP_SIZE * VECTOR_ELEMENTS (128 with 32 lanes), so the rows'
  // counts are packed row_bits bits a row into words, no field ever carrying into the next,
  // and scanned together: 4 rows a word with up to 32 lanes (6 shuffles a word, where a row
  // at a time took 7 a row). A lane's offset in its row is its inclusive sum less its own
  // count (docs/performance.md K33).
  const uint row_bits = SUBGROUP_SIZE * VECTOR_ELEMENTS < 256u && !WIDE_ROW_COUNTS ? 8u : 16u;
  const uint rows_per_word = 32u / row_bits;
  const uint row_words = (VECTORS_PER_THREAD + rows_per_word - 1u) / rows_per_word;
  const uint row_field = (1u << row_bits) - 1u;
  uint packed[VECTORS_PER_THREAD];  // the first row_words are used
  [[unroll]] for (uint w = 0; w < VECTORS_PER_THREAD; ++w) packed[w] = 0u;
  [[unroll]] for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    packed[k / rows_per_word] |= rows[k] << ((k % rows_per_word) * row_bits);
  }
  uint totals[VECTORS_PER_THREAD];
  [[unroll]] for (uint w = 0; w < VECTORS_PER_THREAD; ++w) {
    if (w < row_words) {
      packed[w] = count_inclusive_sum(packed[w]);
      totals[w] = count_of_last_lane(packed[w]);
    }
  }
  uint carry = 0;
  [[unroll]] for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    const uint shift = (k % rows_per_word) * row_bits;
    if (slot == SLOT_OWN || IN_PLACE) {
      owned_vectors[k] = loaded[k];
      owned_masks[k] = masks[k];
      owned_offsets[k] = carry + ((packed[k / rows_per_word] >> shift) & row_field) - rows[k];
    }
    carry += (totals[k / rows_per_word] >> shift) & row_field;
  }
  if (sg_lane() == SUBGROUP_SIZE - 1) wg_kept[slot * SUBGROUPS + sg_id()] = carry;
  scan_kept(slot);
  return kept_in_tile(slot);
}

// The tile value select_tile(tile, slot) found `kept` elements for (count_combine).
TILE_VALUE tile_aggregate(uint slot, uint kept) {
#if GS_COMPACT_RUNS
  return packUint2x32(uvec2(kept, tile_last_head_plus_one(slot) - 1u));  // none: 0 - 1 = NO_HEAD
#else
  return kept;
#endif
}

// The owned tile's kept elements in tile order, so that they go out in coalesced writes (CUB's
// select does the same); for partition, followed by its rejected elements in tile order: the
// tile's stable partition. Out of place, what is staged is where in the tile each of them
// lies, 16 bits an element (wg_positions), and the write reads the values again from the
// input, which the tile's loads have just brought into the L2: shared memory, not registers,
// caps how many workgroups a multiprocessor holds (NVIDIA's Vulkan driver gives them 48 KiB
// in all: staged values, 8 KiB a 2048-element tile of u32, held five where the registers
// allow eight; docs/performance.md, K25), and the look-back's latency a tile is hidden only
// by more tiles in flight. In place the values themselves are staged (wg_stage): once the
// tile's claim is posted, a successor may scatter over its input (docs/protocol.md,
// "In-place compaction").
shared T wg_stage[IN_PLACE && !RLE ? TILE_ELEMENTS : 1];

// The staged positions: position `at` of the staged order is element `position` of the tile.
// Where the device has 16-bit integers, each is a 16-bit variable of its own, set by a plain
// store. Elsewhere two share a 32-bit word, and neighbouring invocations may write the two
// halves of one: hence an atomic OR, into words zeroed by clear_positions. The clearing and
// the atomics cost select 10% and unique 15% of their time on an H100 (docs/performance.md,
// K32).
#if GS_POSITIONS_16
shared uint16_t wg_positions[IN_PLACE && !RLE ? 1 : TILE_ELEMENTS];
void stage_position(uint at, uint position) { wg_positions[at] = uint16_t(position); }
uint staged_position(uint at) { return uint(wg_positions[at]); }
void clear_positions() {}
#else
shared uint wg_positions[IN_PLACE && !RLE ? 1 : TILE_ELEMENTS / 2];
void stage_position(uint at, uint position) {
  atomicOr(wg_positions[at >> 1], position << ((at & 1u) * 16u));
}
uint staged_position(uint at) { return (wg_positions[at >> 1] >> ((at & 1u) * 16u)) & 0xFFFFu; }
// Before select_tile, whose barriers order it before stage_kept.
void clear_positions() {
  if (IN_PLACE && !RLE) return;
  [[unroll]] for (uint w = gl_LocalInvocationIndex; w < TILE_ELEMENTS / 2; w += WORKGROUP_SIZE) {
    wg_positions[w] = 0u;
  }
}
#endif

// Stages the owned tile's kept elements (positions, or in place values). Needs only
// select_tile's result, not the tile's prefix, so it runs before the look-back and the vectors
// need not be held through it. The next barrier makes them visible.
void stage_kept(uint tile) {
  const uint block = kept_before_subgroup(SLOT_OWN);
  const uint kept = kept_in_tile(SLOT_OWN);
  [[unroll]] for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    uint at = block + owned_offsets[k];
    // Partition: the element's position in the tile less the kept ones before it is its
    // place among the rejected.
    const uint first = VECTOR_ELEMENTS * (tile_vector_index(tile, k) - tile * TILE_VECTORS);
    [[unroll]] for (uint c = 0; c < VECTOR_ELEMENTS; ++c) {
      if ((owned_masks[k] & (1u << c)) != 0) {
        if (IN_PLACE && !RLE) {
          wg_stage[at] = owned_vectors[k][c];
        } else {
          stage_position(at, first + c);
        }
        ++at;
      } else if (PARTITION && tile * TILE_ELEMENTS + first + c < pc.n) {
        // Only out of place (in place takes select and unique alone).
        stage_position(kept + first + c - at, first + c);
      }
    }
  }
}

void write_rejected(OUT_INDEX i, T x) {
#if GS_COMPACT_WIDE
  store_element(1, i, x);
#else
  const uvec2 words = t_to_words(x);
  rejected_words[T_WORDS * i] = words.x;
  if (T_WORDS == 2) rejected_words[T_WORDS * i + 1] = words.y;
#endif
}

// Run-length encoding's value and length of run `run`. In the one-binding builds plain
// stores, not functions, so that those builds' SPIR-V stays what it was before the wide one.
#if GS_COMPACT_WIDE
void write_run_value(OUT_INDEX run, T x) { store_element(0, run, x); }
void write_run_length(OUT_INDEX run, uint64_t length) {
  LengthAt(output_addresses[1] + run * 8ul).value = length;
}
#else
#define write_run_value(run, x) out_scalars[run] = (x)
#define write_run_length(run, length) run_lengths[run] = (length)
#endif

// Whether tile `tile` with `kept` elements kept after `tile_prefix` ones keeps every element
// and they are all in place already (every element before it was kept too). In place such a
// tile writes nothing: its last element may be the one unique's next tile reads as the
// element before it, perhaps right then (docs/protocol.md, "In-place compaction").
bool kept_in_place(uint tile, uint tile_prefix, uint kept) {
  const uint tile_start = tile * TILE_ELEMENTS;
  return tile_prefix == tile_start && kept == min(pc.n - tile_start, TILE_ELEMENTS);
}

// Writes the `kept` staged elements from position `tile_prefix` (kept elements before the
// tile in its chunk) on, after the chunks before.
// Partition: the rejected ones after them go to the rejected output, from position
// (rejected elements before the tile) on.
void write_staged(uint tile, uint tile_prefix, uint kept) {
  if (IN_PLACE) {  // one run, one binding: never the wide build
    if (kept_in_place(tile, tile_prefix, kept)) return;
    for (uint i = gl_LocalInvocationIndex; i < kept; i += WORKGROUP_SIZE) {
      store_kept(chunk_base() + tile_prefix + i, wg_stage[i]);
    }
    return;
  }
#if GS_COMPACT_WIDE
  load_output_addresses();
#endif
  const uint tile_start = tile * TILE_ELEMENTS;
  const uint remaining = pc.n - tile_start;
  const uint tile_elements = remaining < TILE_ELEMENTS ? remaining : TILE_ELEMENTS;
  const uint staged = PARTITION ? tile_elements : kept;
  const OUT_INDEX kept_before = tile_prefix + chunk_base();
  const OUT_INDEX rejected_before = chunk_start() + tile_start - kept_before;
  // Every read first, then every write: one round trip to the L2 for all of them.
  T values[ELEMENTS_PER_THREAD];
  [[unroll]] for (uint j = 0; j < ELEMENTS_PER_THREAD; ++j) {
    const uint i = j * WORKGROUP_SIZE + gl_LocalInvocationIndex;
    if (i < staged) values[j] = in_scalars[tile_start + staged_position(i)];
  }
  [[unroll]] for (uint j = 0; j < ELEMENTS_PER_THREAD; ++j) {
    const uint i = j * WORKGROUP_SIZE + gl_LocalInvocationIndex;
    if (i < kept) {
      store_kept(kept_before + i, values[j]);
    } else if (PARTITION && i < staged) {
      write_rejected(rejected_before + i - kept, values[j]);
    }
  }
}

// Run-length encoding: the length of the run from head position `previous` (in the chunk, or
// NO_HEAD: the chunk before's last run, which continues) to position `end` of the chunk.
uint64_t run_length(uint previous, uint end) {
  if (previous != NO_HEAD) return uint64_t(end - previous);
  return uint64_t(chunk_start()) + end - carried_value(GS_CARRY_LAST_HEAD);
}

// Run-length encoding: where the chunk's last run began (0-based over all chunks), from the
// last tile's exclusive prefix and its own heads.
uint64_t last_head_after(uint tile, TILE_VALUE prefix, uint kept) {
  const uint last = kept > 0 ? tile * TILE_ELEMENTS + staged_position(kept - 1)
                             : last_head_of(prefix);
  return last != NO_HEAD ? uint64_t(chunk_start()) + last : carried_value(GS_CARRY_LAST_HEAD);
}

// Run-length encoding: writes the tile's heads (the runs they start), and the length of the
// run before each head: the distance from the head before (in this tile, or the last one
// before the tile: `prefix`'s, or the chunk before's); the last tile also ends the last run,
// at n (in a chunk that another follows, a length the next chunk's first head or last tile
// writes again, longer, if the run goes on). So a run's length is written by the tile
// holding the next run's head, or the last tile, and no tile waits on a successor.
void write_runs(uint tile, TILE_VALUE prefix, uint kept) {
  const uint tile_start = tile * TILE_ELEMENTS;
  const OUT_INDEX runs_before = chunk_base() + count_of(prefix);
  const uint head_before = last_head_of(prefix);  // the last head before the tile
#if GS_COMPACT_WIDE
  load_output_addresses();
#endif
  // The last run's length first: on lavapipe, a write after the loop was lost (as select.comp
  // says of the count).
  if (tile == pc.tile_count - 1 && gl_LocalInvocationIndex == 0) {
    const uint last = kept > 0 ? tile_start + staged_position(kept - 1) : head_before;
    write_run_length(runs_before + kept - 1, run_length(last, pc.n));
  }
  // As write_staged, every read of a round first, then its writes: one round trip to the L2
  // for up to run_rounds * WORKGROUP_SIZE heads (a tile of runs of mean length 8 has about a
  // round's worth), where a read before each head's writes took one a head the invocation
  // writes (docs/performance.md K33).
  const uint run_rounds = 4;
  for (uint base = 0; base < kept; base += run_rounds * WORKGROUP_SIZE) {
    T values[run_rounds];
    uint starts[run_rounds];
    uint ends[run_rounds];
    [[unroll]] for (uint j = 0; j < run_rounds; ++j) {
      const uint i = base + j * WORKGROUP_SIZE + gl_LocalInvocationIndex;
      if (i < kept) {
        ends[j] = tile_start + staged_position(i);
        starts[j] = i == 0 ? head_before : tile_start + staged_position(i - 1);
        values[j] = in_scalars[ends[j]];
      }
    }
    [[unroll]] for (uint j = 0; j < run_rounds; ++j) {
      const uint i = base + j * WORKGROUP_SIZE + gl_LocalInvocationIndex;
      if (i < kept) {
        const OUT_INDEX run = runs_before + i;
        write_run_value(run, values[j]);
        if (run != 0) write_run_length(run - 1, run_length(starts[j], ends[j]));  // 0: element 0
      }
    }
  }
}

// The last tile of a chunk that another follows: what the next chunk needs (`total`: the
// kept elements up to this chunk's end).
void write_chunk_carry(uint tile, TILE_VALUE prefix, uint kept, uint64_t total) {
  write_carried_value(GS_CARRY_COUNT, total);
  if (RLE) write_carried_value(GS_CARRY_LAST_HEAD, last_head_after(tile, prefix, kept));
  if (OPERATION == GS_COMPACT_UNIQUE || RLE) {
    write_carried_value(GS_CARRY_LAST_ELEMENT, packUint2x32(t_to_words(in_scalars[pc.n - 1u])));
  }
}

// The last tile adds the run's count, `prefix` (its kept elements before the tile) plus its
// `kept`, to what the count buffer holds (zero, or the count of the chunks before this run),
// and when a chunk follows, hands the count on through the carry.
void add_run_count(uint tile, TILE_VALUE prefix, TILE_VALUE kept) {
  if (tile != pc.tile_count - 1 || gl_LocalInvocationIndex != 0) return;
  const uint64_t total =
      packUint2x32(uvec2(count_words[0], count_words[1])) + count_of(prefix) + count_of(kept);
  const uvec2 words = unpackUint2x32(total);
  count_words[0] = words.x;
  count_words[1] = words.y;
  if (pc.lead_lo != 0u) write_chunk_carry(tile, prefix, count_of(kept), total);
}

#endif
