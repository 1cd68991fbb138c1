// The compaction kernels' tile level (DESIGN 3e): which elements of a tile are kept, where
// each kept one goes within the tile, and the tile's count. The tile value these kernels
// post through tile_state.glsl and look_back.glsl is a 64-bit count under addition, so this
// file must come before those two.
//
// The owner of a tile and a fallback on it both call select_tile, so a fallback's count is
// the owner's, bit for bit (an integer sum is the same in any order).
#ifndef GPUSCAN_COMPACTION_GLSL
#define GPUSCAN_COMPACTION_GLSL

#ifdef GPUSCAN_TILE_STATE_GLSL
#error "compaction.glsl defines the tile value: include it before tile_state.glsl"
#endif

#include "interface.h"
#include "compaction_interface.h"
#include "types.glsl"
#include "tile_shape.glsl"
#include "subgroup_scan.glsl"

#define TILE_VALUE uint64_t
#define TILE_VALUE_WORDS 2
#define tile_value_to_words unpackUint2x32
#define tile_value_from_words packUint2x32
uint64_t count_identity() { return 0ul; }
uint64_t count_combine(uint64_t earlier, uint64_t later) { return earlier + later; }
#define tile_identity count_identity
#define tile_combine count_combine

layout(binding = GS_COMPACT_BINDING_INPUT_VECTORS, std430) readonly buffer InputVectors {
  TV in_vectors[];
};
layout(binding = GS_COMPACT_BINDING_INPUT_SCALARS, std430) readonly buffer InputScalars {
  T in_scalars[];
};
layout(binding = GS_COMPACT_BINDING_OUTPUT, std430) writeonly buffer Output {
  T out_scalars[];
};
// The flags of select-flagged (read), or partition's rejected elements (written).
layout(binding = GS_COMPACT_BINDING_AUX, std430) buffer Aux {
  uint aux_words[];
};
layout(binding = GS_COMPACT_BINDING_COUNT, std430) buffer Count {
  uint count_words[];
};

layout(constant_id = GS_SPEC_COMPACTION) const uint COMPACTION = 0;
const uint OPERATION = COMPACTION & 15u;
const uint PREDICATE = (COMPACTION >> 4) & 15u;
const uint FLAG_WORDS = (COMPACTION >> 8) & 15u;

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
  uint word = aux_words[FLAG_WORDS * i];
  if (FLAG_WORDS == 2) word |= aux_words[FLAG_WORDS * i + 1];
  return word != 0;
}

// Vector k of this thread in `tile`, in subgroup-blocked order as the scan loads it
// (tile_io.glsl): a row k of a subgroup's block is read by consecutive lanes, so the
// elements of a block run row by row, lane by lane.
uint tile_vector_index(uint tile, uint k) {
  return tile * TILE_VECTORS + (sg_id() * VECTORS_PER_THREAD + k) * SUBGROUP_SIZE + sg_lane();
}

bool is_full_tile(uint tile) { return tile < pc.n / TILE_ELEMENTS; }

TV load_vector(bool full, uint v) {
  const uint first = VECTOR_ELEMENTS * v;
  if (full || first + VECTOR_ELEMENTS <= pc.n) return in_vectors[v];
  TV x = TV(0);
  for (uint c = 0; c < VECTOR_ELEMENTS; ++c) {
    if (first + c < pc.n) x[c] = in_scalars[first + c];
  }
  return x;
}

// Which elements of vector v (bit c: element c), holding `x`, are kept; `before` is the
// element before the vector (unique only).
uint keep_mask(uint v, TV x, T before) {
  const uint first = VECTOR_ELEMENTS * v;
  uint mask = 0;
  for (uint c = 0; c < VECTOR_ELEMENTS; ++c) {
    const uint i = first + c;
    bool keep;
    if (OPERATION == GS_COMPACT_SELECT_IF || OPERATION == GS_COMPACT_PARTITION) {
      keep = satisfies(x[c]);
    } else if (OPERATION == GS_COMPACT_SELECT_FLAGGED) {
      keep = i < pc.n && is_flagged(i);
    } else {
      keep = i == 0 || x[c] != (c == 0 ? before : x[c - 1]);
    }
    if (keep && i < pc.n) mask |= 1u << c;
  }
  return mask;
}

// Subgroup level, on counts: inclusive sum over the logical subgroup, and its last lane's.
uint count_inclusive_sum(uint x) {
  for (uint d = 1; d < SUBGROUP_SIZE; d <<= 1) {
    const uint y = subgroupShuffleUp(x, d);
    if (sg_lane() >= d) x += y;
  }
  return x;
}
uint count_of_last_lane(uint x) {
  return subgroupShuffle(x, gl_SubgroupInvocationID | (SUBGROUP_SIZE - 1));
}

// Per subgroup, kept elements of its block: slot SLOT_OWN for the owned tile, SLOT_FALLBACK
// for a fallback's count of another tile (as workgroup_scan.glsl's partials).
#define SLOT_OWN 0
#define SLOT_FALLBACK 1
shared uint wg_kept[2 * SUBGROUPS];

// Turns wg_kept[slot] into inclusive sums over the subgroups; all threads see the result.
void scan_kept(uint slot) {
  barrier();
  uint carry = 0;
  for (uint base = 0; base < SUBGROUPS; base += SUBGROUP_SIZE) {
    const uint s = base + sg_lane();
    uint x = s < SUBGROUPS ? wg_kept[slot * SUBGROUPS + s] : 0u;
    x = carry + count_inclusive_sum(x);
    carry = count_of_last_lane(x);
    if (sg_id() == 0 && s < SUBGROUPS) wg_kept[slot * SUBGROUPS + s] = x;
  }
  barrier();
}

// What select_tile leaves for the owner's stage_kept: its vectors, which of their elements are
// kept, and where the first kept one of each goes within the subgroup's block.
TV owned_vectors[VECTORS_PER_THREAD];
uint owned_masks[VECTORS_PER_THREAD];
uint owned_offsets[VECTORS_PER_THREAD];

// Loads `tile`, decides which elements are kept and returns how many (uniform across the
// workgroup). For SLOT_OWN the vectors, masks and offsets are kept for stage_kept.
uint select_tile(uint tile, uint slot) {
  const bool full = is_full_tile(tile);
  TV loaded[VECTORS_PER_THREAD];
  uint masks[VECTORS_PER_THREAD];
  for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    loaded[k] = load_vector(full, tile_vector_index(tile, k));
  }
  uint rows[VECTORS_PER_THREAD];
  for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    T before = T(0);
    if (OPERATION == GS_COMPACT_UNIQUE) {
      // The element before lane l's vector is lane l-1's last; lane 0's lies in the row
      // before, or the block (or tile) before: read from memory, where it is pure input.
      before = subgroupShuffleUp(loaded[k][VECTOR_ELEMENTS - 1], 1);
      const uint v = tile_vector_index(tile, k);
      if (sg_lane() == 0 && v != 0 && VECTOR_ELEMENTS * v <= pc.n) {
        before = in_scalars[VECTOR_ELEMENTS * v - 1];
      }
    }
    masks[k] = keep_mask(tile_vector_index(tile, k), loaded[k], before);
    rows[k] = bitCount(masks[k]);
  }
  // Row k of the block: the lanes' counts summed across the lanes, all rows at once; then
  // the rows one after another.
  for (uint d = 1; d < SUBGROUP_SIZE; d <<= 1) {
    for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
      const uint y = subgroupShuffleUp(rows[k], d);
      if (sg_lane() >= d) rows[k] += y;
    }
  }
  uint carry = 0;
  for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    const uint before_lane = subgroupShuffleUp(rows[k], 1);
    if (slot == SLOT_OWN) {
      owned_vectors[k] = loaded[k];
      owned_masks[k] = masks[k];
      owned_offsets[k] = carry + (sg_lane() == 0 ? 0u : before_lane);
    }
    carry += count_of_last_lane(rows[k]);
  }
  if (sg_lane() == SUBGROUP_SIZE - 1) wg_kept[slot * SUBGROUPS + sg_id()] = carry;
  scan_kept(slot);
  return wg_kept[slot * SUBGROUPS + SUBGROUPS - 1];
}

// The owned tile's kept elements, compacted in tile order, so that they go out in
// coalesced writes (CUB's select does the same); for partition, followed by its rejected
// elements in tile order: the tile's stable partition.
shared T wg_stage[TILE_ELEMENTS];

// Puts the owned tile's kept elements in wg_stage. Needs only select_tile's result, not the
// tile's prefix, so it runs before the look-back and the vectors need not be held through it.
// The next barrier makes them visible.
void stage_kept(uint tile) {
  const uint s = sg_id();
  const uint block = s == 0 ? 0u : wg_kept[SLOT_OWN * SUBGROUPS + s - 1];
  const uint kept = wg_kept[SLOT_OWN * SUBGROUPS + SUBGROUPS - 1];
  for (uint k = 0; k < VECTORS_PER_THREAD; ++k) {
    uint at = block + owned_offsets[k];
    // Partition: the element's position in the tile less the kept ones before it is its
    // place among the rejected.
    const uint first = VECTOR_ELEMENTS * (tile_vector_index(tile, k) - tile * TILE_VECTORS);
    for (uint c = 0; c < VECTOR_ELEMENTS; ++c) {
      if ((owned_masks[k] & (1u << c)) != 0) {
        wg_stage[at++] = owned_vectors[k][c];
      } else if (OPERATION == GS_COMPACT_PARTITION && tile * TILE_ELEMENTS + first + c < pc.n) {
        wg_stage[kept + first + c - at] = owned_vectors[k][c];
      }
    }
  }
}

void write_rejected(uint i, T x) {
  const uvec2 words = t_to_words(x);
  aux_words[T_WORDS * i] = words.x;
  if (T_WORDS == 2) aux_words[T_WORDS * i + 1] = words.y;
}

// Writes the `kept` staged elements from position `tile_prefix` (kept elements before the
// tile) on.
// Partition: the rejected ones after them go to the rejected output, from position
// (rejected elements before the tile) on.
void write_staged(uint tile, uint tile_prefix, uint kept) {
  for (uint i = gl_LocalInvocationIndex; i < kept; i += WORKGROUP_SIZE) {
    out_scalars[tile_prefix + i] = wg_stage[i];
  }
  if (OPERATION != GS_COMPACT_PARTITION) return;
  const uint tile_start = tile * TILE_ELEMENTS;
  const uint remaining = pc.n - tile_start;
  const uint tile_elements = remaining < TILE_ELEMENTS ? remaining : TILE_ELEMENTS;
  const uint rejected_before = tile_start - tile_prefix;
  for (uint i = kept + gl_LocalInvocationIndex; i < tile_elements; i += WORKGROUP_SIZE) {
    write_rejected(rejected_before + i - kept, wg_stage[i]);
  }
}

#endif
