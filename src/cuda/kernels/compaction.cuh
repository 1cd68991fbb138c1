// The compaction family in one pass (DESIGN 3e): select-if, select-flagged and unique keep
// some elements of x, in order, and write how many; partition (by predicate or by flags) also
// writes the others, in order, to a second output; run-length encoding writes unique's
// elements and each run's length. The structure of per_tile_scan.cuh and
// shaders/select.comp: a block loads its tile, decides which elements it keeps (thread),
// scans the counts (warp, then block) and stages the kept elements compacted in shared
// memory: warp by warp for every operation but select-flagged, which stages the whole tile
// (kWarpStaged).
// Its first warp then looks back over the tile chain for the kept elements before the
// tile, the whole block recounting any tile the look-back falls back on, and the staged
// elements are written from there (docs/protocol.md, "Compaction").
// Each block also starts a later tile's input on its way into L2 (prefetch_tile; persistent
// blocks their own next tile, prefetch_next_tile), so that the memory stays busy while blocks
// wait on their look-backs.
//
// A tile's value in the chain is its count of kept elements, 32 bits (ChainCount: a run holds
// fewer than 2^32 elements; the count written out and the chunks' carry are 64-bit); for
// run-length encoding the count and the position of the tile's last head (KeptRuns),
// so that a tile's exclusive prefix also says where the run open at its start began and no
// tile waits on a successor for a run's length.
#pragma once

#include <cstring>
#include <type_traits>

#include "cuda/compaction_launch.hpp"
#include "cuda/compaction_policy.hpp"
#include "cuda/kernels/block_scan.cuh"
#include "cuda/kernels/look_back.cuh"

namespace gpuscan::cuda {

constexpr std::uint32_t kNoHead = 0xFFFFFFFFu;

// Counts of kept elements: within a tile (RowCount), and in the chain (ChainCount), both 32-bit:
// a kernel run's n stays below 2^32 (CompactionLauncher::max_elements; longer inputs go in
// chunks, whose carry holds 64 bits). As on Vulkan (K23), a 32-bit tile value takes half
// the tile state's lanes of a 64-bit one (split: two lanes a tile, a window of 16 tiles
// instead of 8): on an H100, unique ran 8% faster than on 64-bit counts, partition by flags
// 3.5%, select 1.7% (docs/performance.md K34).
struct RowCount {
  using T = std::uint32_t;
  __device__ __forceinline__ static T identity() { return 0; }
  __device__ __forceinline__ static T combine(T earlier, T later) { return earlier + later; }
};
using ChainCount = RowCount;
// In-place compaction's count (in_place.cuh), still 64-bit: its walks were measured so.
struct KeptCount {
  using T = std::uint64_t;
  __device__ __forceinline__ static T identity() { return 0; }
  __device__ __forceinline__ static T combine(T earlier, T later) { return earlier + later; }
};
// Run-length encoding: the count in the low word, the position of the last head (first
// element of a run) in the high word, kNoHead if there is none; combining adds the counts
// and keeps the later head. Counts and positions stay below 2^32 (max_elements).
struct KeptRuns {
  using T = std::uint64_t;
  __device__ __forceinline__ static T identity() { return std::uint64_t{kNoHead} << 32; }
  __device__ __forceinline__ static T combine(T earlier, T later) {
    constexpr std::uint64_t high = 0xFFFFFFFF00000000ull;
    const std::uint32_t count =
        static_cast<std::uint32_t>(earlier) + static_cast<std::uint32_t>(later);
    return ((later >> 32) != kNoHead ? later & high : earlier & high) | count;
  }
};

template <Compaction kOp>
constexpr bool kRuns = kOp == Compaction::run_length_encode;
template <Compaction kOp>
constexpr bool kNeighbours = kOp == Compaction::unique || kRuns<kOp>;
// Whether the kept elements are those whose flag is nonzero, and whether the rejected ones go
// to a second output.
template <Compaction kOp>
constexpr bool kFlagged = takes_flags(kOp);
template <Compaction kOp>
constexpr bool kPartition = is_partition(kOp);
// Whether each warp stages and writes its own kept elements (warp_kept, write_warp_staged),
// or the block stages the whole tile and writes it (scan_tile, stage_tile, write_tile).
// Measured on an H100 (docs/performance.md K10, K27): select-if, unique and run-length
// encoding ran 20-45% faster warp by warp with 8 rows, the partitions 5-9% (their rejected
// elements staged from the end of the warp's part); select-flagged 1-7% slower there than
// block by block with 4.
template <Compaction kOp>
constexpr bool kWarpStaged = kOp != Compaction::select_flagged;
// The tile value in the chain, and the value the block scans within a tile.
template <Compaction kOp>
using ChainMonoid = std::conditional_t<kRuns<kOp>, KeptRuns, ChainCount>;
template <Compaction kOp>
using LocalMonoid = std::conditional_t<kRuns<kOp>, KeptRuns, RowCount>;

// The count a tile value or a local value stands for (the low word).
__device__ __forceinline__ std::uint32_t local_count(std::uint64_t v) {
  return static_cast<std::uint32_t>(v);
}
template <Compaction kOp>
__device__ __forceinline__ std::uint64_t chain_count(std::uint64_t v) {
  return kRuns<kOp> ? v & 0xFFFFFFFFu : v;
}

// Compaction in chunks (docs/protocol.md, "Compaction in chunks"): the kept elements of the
// chunks before, and the length of a run from chunk position `previous` (kNoHead: the chunk
// before's last run, which goes on) to chunk position `end`.
__device__ __forceinline__ std::uint64_t chunk_base(const CompactArgs& a) {
  return a.carry_in ? a.carry_in->count : 0;
}
__device__ __forceinline__ std::uint64_t run_length(const CompactArgs& a, std::uint32_t previous,
                                                    std::uint64_t end) {
  if (previous != kNoHead) return end - previous;
  return a.chunk_start + end - a.carry_in->last_head;
}

// select-if's and partition's test, a functor: the kernels take any device functor
// `bool operator()(T) const` (gpuscan/cuda_compaction.cuh); the library's own kernels take
// this one, a built-in predicate and its constant. Built on the host.
template <class T>
struct BuiltinPredicate {
  Predicate predicate;
  T constant;
  static BuiltinPredicate of(const CompactArgs& a) {
    T c;
    std::memcpy(&c, &a.constant_bits, sizeof(T));
    return {a.predicate, c};
  }
};
// The predicate argument of the operations that have none.
struct NoPredicate {};

// Bit e of masks[k]: whether test(rows[k].x[e]).
template <class T, int VPT, class Test>
__device__ __forceinline__ void test_masks(const Vector<T> (&rows)[VPT],
                                           std::uint32_t (&masks)[VPT], const Test& test) {
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    std::uint32_t mask = 0;
#pragma unroll
    for (int e = 0; e < Vector<T>::size; ++e) {
      if (test(rows[k].x[e])) mask |= 1u << e;
    }
    masks[k] = mask;
  }
}

// Thread level: which elements of a vector are kept.
// select-if's and partition's masks: a caller's functor as it is; a built-in predicate's test
// (NaN: every comparison false but ne, as the CPU reference) chosen once a tile (a uniform branch),
// so each element costs one comparison. Six comparisons an element, combined without branches, made
// select-if's kernel issue-bound: ncu on an H100, 92% of the SM's issue throughput with the
// look-back and the writes left out (docs/performance.md K26). A switch inside every element's test
// took it from 64 to 122 registers (K11).
template <class T, int VPT, class Pred>
__device__ __forceinline__ void predicate_masks(const Vector<T> (&rows)[VPT],
                                                std::uint32_t (&masks)[VPT], const Pred& pred) {
  test_masks<T, VPT>(rows, masks, pred);
}
template <class T, int VPT>
__device__ __forceinline__ void predicate_masks(const Vector<T> (&rows)[VPT],
                                                std::uint32_t (&masks)[VPT],
                                                const BuiltinPredicate<T>& pred) {
  const T c = pred.constant;
  switch (pred.predicate) {
    case Predicate::lt:
      return test_masks<T, VPT>(rows, masks, [c](T x) { return x < c; });
    case Predicate::le:
      return test_masks<T, VPT>(rows, masks, [c](T x) { return x <= c; });
    case Predicate::gt:
      return test_masks<T, VPT>(rows, masks, [c](T x) { return x > c; });
    case Predicate::ge:
      return test_masks<T, VPT>(rows, masks, [c](T x) { return x >= c; });
    case Predicate::eq:
      return test_masks<T, VPT>(rows, masks, [c](T x) { return x == c; });
    case Predicate::ne:
      return test_masks<T, VPT>(rows, masks, [c](T x) { return x != c; });
  }
}

// Bit i: whether flag i of a piece of flags (16 bytes, or 8: two 4-byte flags) is nonzero.
__device__ __forceinline__ std::uint32_t nonzero_bits(uint4 w) {
  return (w.x != 0) | (w.y != 0) << 1 | (w.z != 0) << 2 | (w.w != 0) << 3;
}
__device__ __forceinline__ std::uint32_t nonzero_bits(uint2 w) {
  return (w.x != 0) | (w.y != 0) << 1;
}
__device__ __forceinline__ std::uint32_t nonzero_bits(ulonglong2 w) {
  return (w.x != 0) | (w.y != 0) << 1;
}

// Bits of the `Vector<T>::size` flags (of type F, 4 or 8 bytes) from `row`, 16-byte aligned
// or 8-byte for two 4-byte flags, read in pieces of that size.
template <class T, class F>
__device__ __forceinline__ std::uint32_t row_flag_bits(const F* row) {
  constexpr int size = Vector<T>::size;
  using Piece =
      std::conditional_t<sizeof(F) == 8, ulonglong2, std::conditional_t<size == 4, uint4, uint2>>;
  constexpr int per_piece = sizeof(Piece) / sizeof(F);
  std::uint32_t bits = 0;
#pragma unroll
  for (int e = 0; e < size; e += per_piece) {
    bits |= nonzero_bits(__ldcs(reinterpret_cast<const Piece*>(row + e))) << e;
  }
  return bits;
}

// Bit e: whether flag g + e is nonzero, for the vector of elements from g (a multiple of the
// vector's size, so whole-vector flags are 8- or 16-byte aligned): the last tile's rows, and
// every row where the flags are not 16-byte aligned.
template <class T, class F>
__device__ __forceinline__ std::uint32_t flag_mask(const F* flags, std::uint64_t n,
                                                   std::uint64_t g) {
  constexpr int size = Vector<T>::size;
  if (g + size <= n && vector_aligned(flags)) {
    return row_flag_bits<T>(flags + g);
  }
  std::uint32_t mask = 0;
#pragma unroll
  for (int e = 0; e < size; ++e) {
    if (g + e < n && flags[g + e] != 0) mask |= 1u << e;
  }
  return mask;
}

// Bit e of masks[k]: whether the flag (of type F) of element e of this thread's row k is
// nonzero; flags past n are never read, and their elements never kept. As load_tile: a whole
// tile of 16-byte aligned flags is read from one base pointer, the rows at constant offsets
// from it, with no test a row; the last tile (and flags not so aligned) tests each row.
// Testing each row of every tile (its bounds, alignment and pointer) left partition by flags
// at 0.78 of its limit and select-flagged at 0.83, with 84 and 132 bytes spilled (H100,
// docs/performance.md K28).
template <class T, class F, int VPT>
__device__ __forceinline__ void load_flag_masks(const F* flags, std::uint64_t n, std::uint32_t tile,
                                                std::uint32_t (&masks)[VPT]) {
  using Shape = TileShape<T, VPT>;
  const std::uint64_t first = Shape::first(tile);
  if (first + Shape::elements() <= n && vector_aligned(flags)) {
    const F* row0 = flags + first + Shape::row_offset(0);
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
      masks[k] = row_flag_bits<T>(row0 + k * Shape::row_stride);
    }
    return;
  }
#pragma unroll
  for (int k = 0; k < VPT; ++k) masks[k] = flag_mask<T>(flags, n, first + Shape::row_offset(k));
}

// Which elements of this thread's rows of `tile` are kept (bit e of masks[k]: element e of
// row k). Unique and run-length encoding compare each element with the one before: lane
// l - 1's last of the same row; for lane 0, lane 31's last of the row before, and for the
// warp's first row the element before it, read from memory (pure input, so a fallback reads
// the same). One such read a warp rather than one a row: each is a request of its own.
template <class T, Compaction kOp, int VPT, class Pred>
__device__ __forceinline__ void keep_masks(const CompactArgs& a, std::uint32_t tile,
                                           const Vector<T> (&rows)[VPT],
                                           std::uint32_t (&masks)[VPT], const Pred& pred) {
  using Shape = TileShape<T, VPT>;
  if constexpr (kFlagged<kOp>) {
    // Flags past n are never read, and their elements never kept.
    if (a.flag_bytes == 4) {
      load_flag_masks<T>(static_cast<const std::uint32_t*>(a.flags), a.n, tile, masks);
    } else {
      load_flag_masks<T>(static_cast<const unsigned long long*>(a.flags), a.n, tile, masks);
    }
  } else {
    if constexpr (!kNeighbours<kOp>) predicate_masks<T, VPT>(rows, masks, pred);
    const std::uint64_t first = Shape::first(tile);
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
      const std::uint64_t g = first + Shape::row_offset(k);
      std::uint32_t mask = 0;
      if constexpr (kNeighbours<kOp>) {
        T before = __shfl_up_sync(kFullMask, rows[k].last(), 1);
        if (k > 0) {  // unrolled: known at compile time
          const T row_before =
              __shfl_sync(kFullMask, rows[k > 0 ? k - 1 : 0].last(), kWarpSize - 1);
          if (lane_id() == 0) before = row_before;
        } else if (lane_id() == 0 && a.chunk_start + g != 0 && g <= a.n) {
          // A chunk's element 0: the chunk before's last, just before it in memory.
          before = static_cast<const T*>(a.in)[static_cast<std::int64_t>(g) - 1];
        }
#pragma unroll
        for (int e = 0; e < Vector<T>::size; ++e) {
          const T previous = e == 0 ? before : rows[k].x[e - 1];
          if (rows[k].x[e] != previous) mask |= 1u << e;
        }
        // The input's element 0 is kept whatever `before` holds: only a row 0 can hold it.
        if (k == 0 && a.chunk_start + g == 0) mask |= 1u;
      } else {
        mask = masks[k];
      }
      // Elements past n are never kept.
      if (g + Vector<T>::size > a.n) {
        mask &= g >= a.n ? 0u : (1u << (a.n - g)) - 1u;
      }
      masks[k] = mask;
    }
  }
}

// Warp level: this warp's rows' values combined in tile order (row by row, lane by lane),
// the same in every lane. Each row's counts are scanned across the warp; with `stage`, the
// warp's kept elements go compacted, in tile order, to the start of its part of the stage
// (run-length encoding: their positions in the tile, 16 bits each, to its part of
// `positions`), so that they go out in coalesced writes (CUB's select does the same). Each row is
// staged as soon as it is scanned, so its registers are free for the next; the warp's offset in the
// tile is not needed until the write. Rows are scanned as 32-bit counts for every operation (one
// shuffle a step); run-length encoding's last head, the high word of its value, is taken once for
// the warp after the rows: a warp's rows follow one another in the tile, so its last head is
// its lanes' largest (docs/performance.md K26).
template <class L, class T, Compaction kOp, int VPT, bool kStage>
__device__ __forceinline__ typename L::T warp_kept(std::uint32_t tile, const Vector<T> (&rows)[VPT],
                                                   const std::uint32_t (&masks)[VPT], T* stage,
                                                   std::uint16_t* positions) {
  using Shape = TileShape<T, VPT>;
  const std::uint64_t first = Shape::first(tile);
  std::uint32_t kept = 0;
  std::uint32_t last_head = 0;  // run-length encoding: this lane's last head + 1, 0 if none
  // Where the policy says so, the rows' counts are packed 8 bits a row, four rows a word, and
  // scanned together: a row's total over the warp is at most 32 x 4 = 128, so no field carries
  // into the next (two scans for 8 rows instead of eight; docs/performance.md K33).
  constexpr bool kPackedRows = compaction_policy(kOp).packed_row_counts;
  static_assert(kWarpSize * Vector<T>::size < 256, "a row's count fits 8 bits");
  constexpr int kWords = kPackedRows ? (VPT + 3) / 4 : 1;
  std::uint32_t packed[kWords] = {};
  std::uint32_t totals[kWords] = {};
  const auto field = [](const std::uint32_t(&words)[kWords], int k) {
    return (words[k / 4] >> (8 * (k % 4))) & 0xFFu;
  };
  if constexpr (kPackedRows) {
#pragma unroll
    for (int k = 0; k < VPT; ++k) packed[k / 4] |= std::uint32_t(__popc(masks[k])) << (8 * (k % 4));
#pragma unroll
    for (int w = 0; w < kWords; ++w) {
      packed[w] = warp_inclusive_scan<RowCount>(packed[w]);
      totals[w] = warp_last(packed[w]);
    }
  }
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    const std::uint64_t g = first + Shape::row_offset(k);
    const std::uint32_t count = __popc(masks[k]);
    std::uint32_t inclusive;
    std::uint32_t row_total;
    if constexpr (kPackedRows) {
      inclusive = field(packed, k);
      row_total = field(totals, k);
    } else {
      inclusive = warp_inclusive_scan<RowCount>(count);
      row_total = warp_last(inclusive);
    }
    std::uint32_t at = kept + inclusive - count;
    kept += row_total;
    if constexpr (kRuns<kOp>) {
      if (masks[k] != 0) last_head = static_cast<std::uint32_t>(g) + 32u - __clz(masks[k]);
    }
    if constexpr (kStage) {
      // A partition's rejected elements fill the warp's part from its end, backwards: the r-th
      // rejected at part - 1 - r, above every kept one whatever the counts (elements past n
      // included; write_warp_staged writes only those before n).
      const std::uint32_t in_part = Shape::row_in_warp(k);
#pragma unroll
      for (int e = 0; e < Vector<T>::size; ++e) {
        if ((masks[k] >> e) & 1u) {
          stage[at] = rows[k].x[e];
          if constexpr (kRuns<kOp>) positions[at] = static_cast<std::uint16_t>(g + e - first);
          ++at;
        } else if constexpr (kPartition<kOp>) {
          stage[Shape::per_warp - 1 - (in_part + e - at)] = rows[k].x[e];
        }
      }
    }
  }
  if constexpr (kRuns<kOp>) {
#pragma unroll
    for (int d = kWarpSize / 2; d > 0; d >>= 1) {
      last_head = max(last_head, __shfl_xor_sync(kFullMask, last_head, d));
    }
    // No head: 0 - 1 is kNoHead.
    return std::uint64_t{last_head - 1u} << 32 | kept;
  } else {
    return kept;
  }
}

// A fallback's value of `target`: its input loaded and counted as its owner counts it, warp
// by warp and then across the block in partials set `set`, so it gets the owner's bits.
template <class T, Compaction kOp, int VPT, int kSets, class Pred>
__device__ __forceinline__ std::uint64_t recount_tile(
    const CompactArgs& a, std::uint32_t target,
    BlockPartials<typename LocalMonoid<kOp>::T, kSets>& partials, int set, const Pred& pred) {
  using L = LocalMonoid<kOp>;
  Vector<T> rows[VPT];
  load_tile<T, VPT>(static_cast<const T*>(a.in), a.n, target, T{}, rows);
  std::uint32_t masks[VPT];
  keep_masks<T, kOp, VPT>(a, target, rows, masks, pred);
  block_scan_totals<L, WholeBlock>(
      partials, set, warp_kept<L, T, kOp, VPT, false>(target, rows, masks, nullptr, nullptr));
  return block_total<L, WholeBlock>(partials, set);
}

// Writes this warp's staged elements after the kept ones before it: those of the tiles
// before (`prefix`, the chain's value) and of the warps before in the tile (`warp_before`,
// the block scan's). Run-length encoding writes each head's run value and the length of the run
// before it (the distance from the head before: in this warp, or the last one before it, in the
// tile or before the tile); the last tile also ends the last run, at n (`tile_value`: the tile's
// own value). A partition also writes the warp's rejected elements, staged from the part's end,
// to the second output.
template <class T, Compaction kOp, int VPT>
__device__ __forceinline__ void write_warp_staged(const CompactArgs& a, std::uint32_t tile,
                                                  std::uint64_t prefix, std::uint64_t warp_before,
                                                  std::uint32_t kept_here, std::uint64_t tile_value,
                                                  const T* stage, const std::uint16_t* positions) {
  T* out = static_cast<T*>(a.out);
  const std::uint64_t base = chunk_base(a);
  const std::uint64_t before = base + chain_count<kOp>(prefix) + local_count(warp_before);
  if constexpr (kRuns<kOp>) {
    auto* lengths = static_cast<std::uint64_t*>(a.second);
    const auto last_head = [](std::uint64_t earlier, std::uint64_t later) {
      return static_cast<std::uint32_t>((later >> 32) != kNoHead ? later >> 32 : earlier >> 32);
    };
    const std::uint32_t head_before = last_head(prefix, warp_before);
    // Staged positions are in the tile; run lengths take chunk positions.
    const auto tile_first = static_cast<std::uint32_t>(TileShape<T, VPT>::first(tile));
    for (std::uint32_t i = lane_id(); i < kept_here; i += kWarpSize) {
      const std::uint64_t run = before + i;
      out[run] = stage[i];
      if (run == 0) continue;  // element 0
      const std::uint32_t previous = i == 0 ? head_before : tile_first + positions[i - 1];
      lengths[run - 1] = run_length(a, previous, tile_first + positions[i]);
    }
    // In a chunk that another follows, the last run may go on: the next chunk writes its
    // length again.
    if (tile == a.tile_count - 1 && threadIdx.x == 0) {
      const std::uint64_t runs = base + chain_count<kOp>(prefix) + local_count(tile_value);
      lengths[runs - 1] = run_length(a, last_head(prefix, tile_value), a.n);
    }
  } else {
    for (std::uint32_t i = lane_id(); i < kept_here; i += kWarpSize) out[before + i] = stage[i];
  }
  if constexpr (kPartition<kOp>) {
    // The warp's rejected go after the rejected before it: its first element's position less
    // the kept elements before it.
    constexpr std::uint32_t part = TileShape<T, VPT>::per_warp;
    const std::uint64_t warp_first = TileShape<T, VPT>::first(tile) + warp_id() * part;
    const std::uint32_t in_warp =
        warp_first >= a.n ? 0u
                          : static_cast<std::uint32_t>(min(a.n - warp_first, std::uint64_t{part}));
    T* rejected = static_cast<T*>(a.second) + (a.chunk_start + warp_first - before);
    for (std::uint32_t i = lane_id(); i < in_warp - kept_here; i += kWarpSize) {
      rejected[i] = stage[part - 1 - i];
    }
  }
}

// The block-wide staging (select-flagged): the rows' values scanned in tile order
// (warp by warp, row by row, lane by lane), offsets[k] the kept elements before row k within
// the warp, partials set `set` the warps' inclusive values; returns the tile's value.
template <class L, class T, int VPT, int kSets>
__device__ __forceinline__ typename L::T scan_tile(const std::uint32_t (&masks)[VPT],
                                                   BlockPartials<typename L::T, kSets>& partials,
                                                   int set, std::uint32_t (&offsets)[VPT]) {
  static_assert(std::is_same_v<L, RowCount>, "the block-wide staging counts; no runs");
  using V = typename L::T;
  V carry = L::identity();
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    const V inclusive = warp_inclusive_scan<L>(static_cast<std::uint32_t>(__popc(masks[k])));
    offsets[k] = local_count(L::combine(carry, warp_shift_up<L>(inclusive)));
    carry = L::combine(carry, warp_last(inclusive));
  }
  block_scan_totals<L, WholeBlock>(partials, set, carry);
  return block_total<L, WholeBlock>(partials, set);
}

// Puts the tile's kept elements, compacted in tile order, at the start of `stage`.
template <class T, int VPT>
__device__ __forceinline__ void stage_tile(const Vector<T> (&rows)[VPT],
                                           const std::uint32_t (&masks)[VPT],
                                           const std::uint32_t (&offsets)[VPT],
                                           std::uint32_t warp_before, T* stage) {
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    std::uint32_t at = warp_before + offsets[k];
#pragma unroll
    for (int e = 0; e < Vector<T>::size; ++e) {
      if ((masks[k] >> e) & 1u) stage[at++] = rows[k].x[e];
    }
  }
}

// Writes the staged tile after the `before` kept ones of the tiles before.
template <class T>
__device__ __forceinline__ void write_tile(const CompactArgs& a, std::uint64_t before,
                                           std::uint32_t kept, const T* stage) {
  T* out = static_cast<T*>(a.out);
  for (std::uint32_t i = threadIdx.x; i < kept; i += blockDim.x) out[before + i] = stage[i];
}

// The last tile of a chunk that another follows: what the next chunk needs (`total`: the kept
// elements up to this chunk's end; `prefix`, `tile_value`: the tile's chain values).
template <Compaction kOp>
__device__ __forceinline__ void write_chunk_carry(const CompactArgs& a, std::uint64_t prefix,
                                                  std::uint64_t tile_value, std::uint64_t total) {
  a.carry_out->count = total;
  if constexpr (kRuns<kOp>) {
    const std::uint64_t head = (tile_value >> 32) != kNoHead ? tile_value >> 32 : prefix >> 32;
    a.carry_out->last_head = head != kNoHead ? a.chunk_start + head : a.carry_in->last_head;
  }
}

// Starts tile `tile`'s input on its way into L2, one bulk prefetch from one thread, no
// registers held (sm_90 and later; a hint, nothing on older devices): a block that waits on
// its look-back leaves the memory idle unless another block loads, and the prefetch fills
// that time (compaction_policy.hpp, prefetch_eighths). Never the last tile (it may be
// partial) nor input that is not 16-byte aligned (the bulk copy's rule).
template <class T, int VPT>
__device__ __forceinline__ void prefetch_tile(const CompactArgs& a, std::uint32_t tile) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const T* in = static_cast<const T*>(a.in);
  if (tile + 1 >= a.tile_count || !vector_aligned(in)) return;
  const std::uint32_t bytes = TileShape<T, VPT>::elements() * std::uint32_t{sizeof(T)};
  asm volatile(
      "cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(in + TileShape<T, VPT>::first(tile)),
      "r"(bytes)
      : "memory");
#endif
}

// The same for a persistent block's next tile, the last one too (its elements up to n,
// rounded down to 16 bytes). Written so, and not as prefetch_tile: in the persistent kernel
// that form ran no faster than no prefetch at all (docs/performance.md K35: the same PTX but
// for the guard, the machine code scheduled apart throughout).
template <class T, int VPT>
__device__ __forceinline__ void prefetch_next_tile(const CompactArgs& a, std::uint32_t tile) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (tile >= a.tile_count) return;
  using Shape = TileShape<T, VPT>;
  const std::uint64_t first = Shape::first(tile);
  const std::uint64_t count = min(std::uint64_t{Shape::elements()}, a.n - first);
  const T* p = static_cast<const T*>(a.in) + first;
  const std::uint32_t bytes = static_cast<std::uint32_t>(count * sizeof(T)) & ~15u;
  if (!vector_aligned(p) || bytes == 0) return;
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
#endif
}

template <class L>
struct CompactShared {
  BlockPartials<typename L::T, 2> partials;  // set 0: the block's tile; set 1: a fallback's
  std::uint32_t tile;
  std::uint32_t next;     // persistent blocks, from the counter: the block's next tile
  std::uint32_t verdict;  // kDone, or a tile to recount for a fallback
  std::uint64_t prefix;   // the chain value before the tile, once kDone
};
constexpr int kCompactOwnSet = 0;
constexpr int kCompactRecountSet = 1;

// Bytes of dynamic shared memory a block stages its tile in.
template <class T>
constexpr std::size_t compact_stage_bytes(Compaction op, std::uint32_t block_size,
                                          std::uint32_t rows) {
  const std::size_t elements = std::size_t{block_size} * rows * Vector<T>::size;
  return elements * sizeof(T) + (op == Compaction::run_length_encode ? elements * 2 : 0);
}

// Device level: the kept elements (rle: and the last head) of the tiles before `tile`, the
// same in every thread. The look-back warp posts the tile's aggregate and walks back from the
// early window read along with the tile's loads; the whole block recounts each tile the walk
// falls back on.
template <class T, Compaction kOp, int VPT, class M, class S, bool kStats, class Pred>
__device__ __forceinline__ std::uint64_t look_back_tile(
    const CompactArgs& a, const ChainArgs& chain, LookBack<M, S, kStats>& look,
    CompactShared<LocalMonoid<kOp>>& shared, std::uint32_t tile, std::uint64_t aggregate,
    const typename S::Word& window, bool looks_back, const Pred& pred) {
  using V = typename M::T;
  std::uint32_t cursor = tile - 1;
  V prefix = M::identity();
  bool done = tile == 0;
  EarlyWindow<V> early{kNoTile, M::identity()};
  const V own = static_cast<V>(aggregate);
  const auto look_on = [&] {
    if (!done) done = look.walk(tile, cursor, prefix, early);
    if (done && tile != 0) look.spine().post(tile, GS_STATE_INCLUSIVE, M::combine(prefix, own));
    if (lane_id() == 0) {
      shared.verdict = done ? kDone : cursor;
      shared.prefix = prefix;
    }
  };
  if (looks_back) {
    post_aggregate(look.spine(), chain, tile, own);
    if (tile != 0) early = look.note_early_window(tile, window);
    look_on();
  }
  __syncthreads();
  for (;;) {
    const std::uint32_t target = shared.verdict;
    if (target == kDone) break;
    // recount_tile's barriers keep the look-back warp from writing the next verdict before
    // every warp has read this one.
    const std::uint64_t recount =
        recount_tile<T, kOp, VPT>(a, target, shared.partials, kCompactRecountSet, pred);
    if (looks_back) {
      done = look.insert(cursor, prefix, static_cast<V>(recount));
      look_on();
    }
    __syncthreads();
  }
  return shared.prefix;
}

// The registers a thread may take are the policy's: left to ptxas, they moved with small code
// changes, and the occupancy with them (compaction_policy.hpp).
// Pred: select-if's and partition's test (BuiltinPredicate, or the caller's functor); for
// the other operations NoPredicate.
// A block takes one tile, or, where the policy makes the blocks persistent (launched as many
// as are resident), tile after tile: in dispatch order its block id, then every grid size
// after; from the counter, the next tile claimed before this one's look-back. The look-back
// and its fallbacks are the same for either (a block that is not resident only leaves its
// tiles to its successors' fallbacks).
template <class T, Compaction kOp, class S, bool kStats, int VPT, class Pred>
__global__ void __launch_bounds__(kCompactBlockLimit) __maxnreg__(compaction_policy(kOp).registers)
    compact_tiles(CompactArgs a, ChainArgs chain, Pred pred) {
  using M = ChainMonoid<kOp>;
  using L = LocalMonoid<kOp>;
  constexpr bool kPersistent = compaction_policy(kOp).persistent;
  __shared__ CompactShared<L> shared;
  extern __shared__ uint4 stage_words[];
  T* stage = reinterpret_cast<T*>(stage_words);
  const std::uint32_t tile_elements = TileShape<T, VPT>::elements();
  auto* positions = reinterpret_cast<std::uint16_t*>(stage + tile_elements);
  static_assert(kCompactBlockLimit * VPT * Vector<T>::size <= 65536,
                "run-length encoding stages positions in the tile in 16 bits");
  const T* in = static_cast<const T*>(a.in);
  const bool looks_back = warp_id() == 0;
  // As per_tile_scan.cuh: in dispatch order the tile's loads go out first, the turn and the
  // window before the tile after them; from the counter the turn comes first.
  LookBack<M, S, kStats> look{chain, {}};
  Turn turn{0, 0, 0};
  std::uint32_t tile = blockIdx.x;
  Vector<T> rows[VPT];
  typename S::Word window{};  // NOT_READY
  // Whether the policy prefetches at all is known here; a block a tile prefetches the tile
  // prefetch_distance after its own (warp 1: the look-back warp has the turn to take), before
  // its loads in dispatch order, where the device holds enough blocks for a distance.
  constexpr bool kPrefetch = compaction_policy(kOp).prefetch_eighths != 0;
  const bool prefetches =
      kPrefetch && !kPersistent && a.prefetch_distance != 0 && threadIdx.x == kWarpSize;
  if (chain.dispatch_order) {
    if (prefetches) prefetch_tile<T, VPT>(a, tile + a.prefetch_distance);
    load_tile<T, VPT>(in, a.n, tile, T{}, rows);
    if (looks_back) {
      turn = take_turn(chain);
      if (tile != 0) window = look.spine().read_window(tile - 1, 0);
    }
  } else {
    if (looks_back) turn = take_turn(chain);
    if (threadIdx.x == 0) {
      shared.tile = atomicAdd(&chain.state->control[turn.half].tile_counter, 1u);
    }
    __syncthreads();
    tile = shared.tile;
    if (kPersistent && tile >= a.tile_count) {  // the blocks before took every tile
      if (looks_back) {
        clear_for_next_run(chain, turn);
        hand_on_turn(chain, turn.place, std::uint64_t{a.tile_count} * kCompactSpineWords);
      }
      return;
    }
    if (prefetches) prefetch_tile<T, VPT>(a, tile + a.prefetch_distance);
    if (looks_back && tile != 0) window = look.spine().read_window(tile - 1, 0);
    load_tile<T, VPT>(in, a.n, tile, T{}, rows);
  }
  if (looks_back) clear_for_next_run(chain, turn);

  constexpr std::uint32_t part = TileShape<T, VPT>::per_warp;
  T* const warp_stage = stage + warp_id() * part;
  std::uint16_t* const warp_positions = positions + warp_id() * part;
  for (;;) {
    // The counter's next tile, read after the block scan's barriers. Persistent blocks prefetch
    // it as soon as it is known, a whole tile ahead (K35: later in the tile ran slower).
    std::uint32_t next_tile = tile + gridDim.x;
    if (kPersistent && !chain.dispatch_order && threadIdx.x == 0) {
      next_tile = atomicAdd(&chain.state->control[run_half()].tile_counter, 1u);
      shared.next = next_tile;
    }
    if (kPersistent && kPrefetch && threadIdx.x == 0) prefetch_next_tile<T, VPT>(a, next_tile);
    std::uint32_t masks[VPT];
    keep_masks<T, kOp, VPT>(a, tile, rows, masks, pred);
    // ChainCount: the count; KeptRuns: as it is.
    std::uint64_t aggregate = 0;
    if constexpr (kWarpStaged<kOp>) {
      block_scan_totals<L, WholeBlock>(
          shared.partials, kCompactOwnSet,
          warp_kept<L, T, kOp, VPT, true>(tile, rows, masks, warp_stage, warp_positions));
      aggregate = block_total<L, WholeBlock>(shared.partials, kCompactOwnSet);
    } else {
      std::uint32_t offsets[VPT];
      aggregate = scan_tile<L, T, VPT>(masks, shared.partials, kCompactOwnSet, offsets);
      stage_tile<T, VPT>(rows, masks, offsets,
                         local_count(warp_prefix<L>(shared.partials, kCompactOwnSet)), stage);
    }
    const std::uint32_t kept = local_count(aggregate);
    const std::uint32_t next = !kPersistent           ? kNoTile
                               : chain.dispatch_order ? next_tile
                                                      : shared.next;
    const std::uint64_t before = look_back_tile<T, kOp, VPT>(a, chain, look, shared, tile,
                                                             aggregate, window, looks_back, pred);
    const bool block_done = next >= a.tile_count;
    if (block_done) {
      if constexpr (kStats) {
        if (looks_back && lane_id() == 0) look.add_counts();
      }
      if (looks_back) {
        hand_on_turn(chain, turn.place, std::uint64_t{a.tile_count} * kCompactSpineWords);
      }
    }
    if (tile == a.tile_count - 1 && threadIdx.x == 0) {
      const std::uint64_t total = chunk_base(a) + chain_count<kOp>(before) + kept;
      *a.count = total;
      if (a.carry_out) write_chunk_carry<kOp>(a, before, aggregate, total);
    }
    if constexpr (kWarpStaged<kOp>) {
      // Set kCompactOwnSet holds the warps' inclusive values until the tile is written.
      const std::uint64_t warp_before = warp_prefix<L>(shared.partials, kCompactOwnSet);
      const std::uint32_t kept_here =
          local_count(shared.partials.warp_totals[kCompactOwnSet][warp_id()]) -
          local_count(warp_before);
      write_warp_staged<T, kOp, VPT>(a, tile, before, warp_before, kept_here, aggregate, warp_stage,
                                     warp_positions);
    } else {
      write_tile<T>(a, chunk_base(a) + chain_count<kOp>(before), kept, stage);
    }
    if (block_done) break;
    // The next tile's partials, stage and verdict overwrite this one's.
    __syncthreads();
    tile = next;
    load_tile<T, VPT>(in, a.n, tile, T{}, rows);
    if (looks_back) window = look.spine().read_window(tile - 1, 0);
  }
}

}  // namespace gpuscan::cuda
