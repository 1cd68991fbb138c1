// The local scan of one tile of a batched scan (DESIGN 3f), level by level as in
// tile_scan.cuh, but segmented: a value never crosses the start of a row. Every level
// keeps, beside its values, where the rows start (from rows.cuh's arithmetic and ballots,
// never from memory), and joins a prefix only into the elements whose row began before
// the level's range. The tile's aggregate is its segmented total: from its last row start
// when it holds one (then it is already the tile's inclusive value, docs/protocol.md,
// "Batched scans"), else of the whole tile.
//
// The init value joins each row's first element as it is read, so the owner of a tile and
// a fallback on it combine the same values in the same order and get the same bits.
#pragma once

#include <type_traits>

#include "cuda/kernels/rows.cuh"
#include "cuda/kernels/tile_scan.cuh"

namespace gpuscan::cuda {

// Per team warp: whether a row starts in its block; and the warps of the tile that hold
// one, as a mask (kMaxWarps == 32), once block_scan_rows has run.
template <int kSets>
struct RowFlags {
  std::uint32_t warp_starts[kSets][kMaxWarps];
  std::uint32_t start_warps[kSets];
};

// The highest lane at or below this one whose bit is set in `mask`, or -1.
__device__ __forceinline__ int last_set_lane_upto(std::uint32_t mask) {
  const int lane = lane_id();
  const std::uint32_t upto = lane == kWarpSize - 1 ? kFullMask : (2u << lane) - 1u;
  const std::uint32_t m = mask & upto;
  return m == 0 ? -1 : kWarpSize - 1 - __clz(m);
}

// Segmented Kogge-Stone: lane l joins the partial of lane l - d only while that lane is at
// or after `head`, the last lane up to l whose value starts a segment, so lane l ends with
// lanes [max(head, 0), l] combined.
template <class M>
__device__ __forceinline__ typename M::T warp_segmented_scan(typename M::T x, int head) {
  const int lane = lane_id();
#pragma unroll
  for (int d = 1; d < kWarpSize; d <<= 1) {
    const typename M::T y = __shfl_up_sync(kFullMask, x, d);
    if (lane - d >= head && lane >= d) x = M::combine(y, x);
  }
  return x;
}

// Which of a vector's `size` elements start a row (bit e: element e), its first element
// `d` from its row's start and `p` elements into the tile. Row starts at or past `valid` (n,
// in the last tile) do not count: the last tile's fill is no row.
__device__ __forceinline__ std::uint32_t row_start_bits(std::uint32_t d, std::uint32_t p,
                                                        const TileRows& rows, std::uint32_t valid,
                                                        int size) {
  std::uint32_t bits = 0;
#pragma unroll
  for (int e = 0; e < size; ++e) {
    if (d == 0 && p + e < valid) bits |= 1u << e;
    d = rows.next(d);
  }
  return bits;
}

// Thread level: segmented inclusive scan of one vector whose elements in `starts` (bits)
// start a row. Returns the first element that starts a row, or the vector's size if none
// does.
template <class M>
__device__ __forceinline__ int thread_segmented_scan(Vector<typename M::T>& v, std::uint32_t starts,
                                                     typename M::T row_init) {
  constexpr int size = Vector<typename M::T>::size;
  int first_start = size;
#pragma unroll
  for (int e = 0; e < size; ++e) {
    if (((starts >> e) & 1u) != 0) {
      v.x[e] = M::combine(row_init, v.x[e]);
      if (first_start == size) first_start = e;
    } else if (e > 0) {
      v.x[e] = M::combine(v.x[e - 1], v.x[e]);
    }
  }
  return first_start;
}

// The tile's aggregate in reduction order (docs/protocol.md, "Batched scans"): each thread
// combines its elements from the tile's last row start on (all of them when no row starts
// in it), vector by vector, the init value joined to that start; then the lanes and the
// warps in order. Owner and fallback both take this order, so they post the same bits
// without the fallback running the segmented scan (whose registers made the owner's tile
// spill). Integers would give the same bits in any order.
struct TileLastStart {
  bool starts;       // a row starts in the tile (below n)
  std::uint32_t at;  // the last such start, as an offset into the tile
};

template <class T, int VPT, class Team>
__device__ __forceinline__ TileLastStart last_row_start(const TileRows& tile_rows, std::uint64_t n,
                                                        std::uint64_t first) {
  using Shape = TileShape<T, VPT, Team>;
  const std::uint32_t last = (n - first < Shape::elements() ? n - first : Shape::elements()) - 1;
  const std::uint32_t d = tile_rows.distance(last);
  return {d <= last, last - d};  // d <= last: the last element's row began in the tile
}

// The same for a segmented scan's tile (rows.cuh, SegmentList), or a uniform one's.
template <class T, int VPT, class Team, bool kSegments>
__device__ __forceinline__ TileLastStart tile_last_start(const RowPositions& pos,
                                                         const TileSegments* segments,
                                                         std::uint64_t n, std::uint64_t first) {
  if constexpr (kSegments) {
    TileLastStart last{false, 0};
    last.starts = segments->list.last_start_in(static_cast<std::uint32_t>(first),
                                               TileShape<T, VPT, Team>::elements(), n, last.at);
    return last;
  } else {
    return last_row_start<T, VPT, Team>(pos.in_tile(first, kWarpSize * Vector<T>::size), n, first);
  }
}

// Whether a row or segment starts in `tile` below n (then its aggregate is INCLUSIVE).
template <class T, int VPT, bool kSegments>
__device__ __forceinline__ bool tile_holds_row_start(const RowPositions& pos,
                                                     const TileSegments& segments,
                                                     std::uint32_t tile, std::uint64_t n) {
  const std::uint64_t first = TileShape<T, VPT>::first(tile);
  if constexpr (kSegments) {
    std::uint32_t at;
    return segments.list.last_start_in(static_cast<std::uint32_t>(first),
                                       TileShape<T, VPT>::elements(), n, at);
  } else {
    return pos.starts_in(first, TileShape<T, VPT>::elements(), n);
  }
}

// Joins the elements of vector `v`, `p` elements into the tile, that count towards the
// aggregate into `total` (thread level of the reduction order).
template <class M>
__device__ __forceinline__ void add_to_row_total(typename M::T& total,
                                                 const Vector<typename M::T>& v, std::uint32_t p,
                                                 TileLastStart last_start, typename M::T row_init) {
#pragma unroll
  for (int e = 0; e < Vector<typename M::T>::size; ++e) {
    typename M::T x = v.x[e];
    if (last_start.starts && p + e == last_start.at) x = M::combine(row_init, x);
    if (!last_start.starts || p + e >= last_start.at) total = M::combine(total, x);
  }
}

// Block level: the segmented scan of the warps' totals. Afterwards partials set `set`
// holds each warp's segmented inclusive total and flags.start_warps[set] the warps that
// hold a row start.
template <class M, class Team, int kSets>
__device__ __forceinline__ void block_scan_rows(BlockPartials<typename M::T, kSets>& partials,
                                                RowFlags<kSets>& flags, int set,
                                                typename M::T warp_total, bool warp_starts,
                                                int reduction_set = -1,
                                                typename M::T reduction_warp_total = {}) {
  const int warps = Team::threads() / kWarpSize;
  if (lane_id() == kWarpSize - 1) {
    partials.warp_totals[set][warp_id()] = warp_total;
    flags.warp_starts[set][warp_id()] = warp_starts;
    if (reduction_set >= 0) partials.warp_totals[reduction_set][warp_id()] = reduction_warp_total;
  }
  Team::sync();
  if (warp_id() == 0) {
    const int lane = lane_id();
    typename M::T x = lane < warps ? partials.warp_totals[set][lane] : M::identity();
    const std::uint32_t mask =
        __ballot_sync(kFullMask, lane < warps && flags.warp_starts[set][lane] != 0);
    x = warp_segmented_scan<M>(x, last_set_lane_upto(mask));
    if (lane < warps) partials.warp_totals[set][lane] = x;
    if (lane == 0) flags.start_warps[set] = mask;
    if (reduction_set >= 0) {
      typename M::T y = lane < warps ? partials.warp_totals[reduction_set][lane] : M::identity();
      y = warp_inclusive_scan<M>(y);
      if (lane < warps) partials.warp_totals[reduction_set][lane] = y;
    }
  }
  Team::sync();
}

// Scans this thread's `loaded` rows of tile `tile` segmented by rows: each warp's block row
// by row, then the warp totals across the team. With kKeep, `rows` ends up holding each
// element's value from its row's start or from the warp block's start, whichever is later
// (store_tile_rows finishes the second kind). Returns the tile's aggregate (the same in
// every thread): for integers the segmented scan's total, for floats the total in
// reduction order (add_to_row_total), computed beside it in set `reduction_set`, which
// load_and_reduce_rows gives a fallback bit for bit; `starts` tells whether a row starts
// in the tile.
template <class M, int VPT, bool kKeep, bool kSegments = false, class Team = WholeBlock, int kSets>
__device__ __forceinline__ typename M::T row_tile_local_scan(
    Vector<typename M::T> (&loaded)[VPT], BlockPartials<typename M::T, kSets>& partials,
    RowFlags<kSets>& flags, int set, int reduction_set, Vector<typename M::T> (&rows)[VPT],
    const RowPositions& pos, const TileSegments* segments, std::uint64_t n, std::uint32_t tile,
    typename M::T row_init, bool& starts) {
  using T = typename M::T;
  using Shape = TileShape<T, VPT, Team>;
  constexpr int size = Vector<T>::size;
  const std::uint64_t first = Shape::first(tile);
  const TileRows tile_rows = pos.in_tile(first, kWarpSize * size);
  const std::uint32_t valid = n - first < Shape::elements() ? n - first : Shape::elements();
  const int lane = lane_id();
  constexpr bool kReductionOrder = !std::is_integral_v<T>;
  const TileLastStart last_start =
      tile_last_start<T, VPT, Team, kSegments>(pos, segments, n, first);
  T reduction = M::identity();  // floats: this thread's part of the reduction-order total
  T carry = M::identity();      // the warp's block so far, from its last row start
  bool warp_starts = false;
  std::uint32_t d = tile_rows.distance(Shape::row_offset(0));
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    if (k > 0) d = tile_rows.advance(d);
    if constexpr (kReductionOrder) {
      add_to_row_total<M>(reduction, loaded[k], Shape::row_offset(k), last_start, row_init);
    }
    std::uint32_t row_starts;
    if constexpr (kSegments) {
      row_starts = segments->vector_bits(Shape::row_offset(k), size);
    } else {
      row_starts = row_start_bits(d, Shape::row_offset(k), tile_rows, valid, size);
    }
    const int first_start = thread_segmented_scan<M>(loaded[k], row_starts, row_init);
    const std::uint32_t mask = __ballot_sync(kFullMask, first_start < size);
    const T inclusive = warp_segmented_scan<M>(loaded[k].last(), last_set_lane_upto(mask));
    const T previous = __shfl_up_sync(kFullMask, inclusive, 1);
    // What precedes this lane's elements before its first row start: the lanes since the
    // row's start, and the rows before this one if the row began before them.
    const bool row_began_before = (mask & ((1u << lane) - 1u)) == 0;
    const T lane_prefix =
        lane == 0 ? carry : (row_began_before ? M::combine(carry, previous) : previous);
    const T last = warp_last(inclusive);
    carry = mask != 0 ? last : M::combine(carry, last);
    warp_starts = warp_starts || mask != 0;
    if constexpr (kKeep) {
#pragma unroll
      for (int e = 0; e < size; ++e) {
        rows[k].x[e] = e < first_start ? M::combine(lane_prefix, loaded[k].x[e]) : loaded[k].x[e];
      }
    }
  }
  if constexpr (kReductionOrder) reduction = warp_last(warp_inclusive_scan<M>(reduction));
  block_scan_rows<M, Team>(partials, flags, set, carry, warp_starts,
                           kReductionOrder ? reduction_set : -1, reduction);
  starts = flags.start_warps[set] != 0;
  return block_total<M, Team>(partials, kReductionOrder ? reduction_set : set);
}

// Scans a tile of a batched scan that holds no row start as a plain tile (tile_scan.cuh):
// nothing in it is segmented, so the segmented machinery is paid only where a row starts.
// Its aggregate is the one load_and_reduce_rows gets: for integers the plain scan's total,
// for floats the reduction-order total, in set `reduction_set` (two barriers more).
template <class M, int VPT, class Team = WholeBlock, int kSets>
__device__ __forceinline__ typename M::T row_free_tile_scan(
    Vector<typename M::T> (&loaded)[VPT], BlockPartials<typename M::T, kSets>& partials, int set,
    int reduction_set, Vector<typename M::T> (&rows)[VPT]) {
  using T = typename M::T;
  if constexpr (std::is_integral_v<T>) {
    return tile_local_scan<M, VPT, true, Team>(loaded, partials, set, rows);
  } else {
    T total = M::identity();
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
#pragma unroll
      for (int e = 0; e < Vector<T>::size; ++e) total = M::combine(total, loaded[k].x[e]);
    }
    block_scan_totals<M, Team>(partials, reduction_set, warp_last(warp_inclusive_scan<M>(total)));
    tile_local_scan<M, VPT, true, Team>(loaded, partials, set, rows);
    return block_total<M, Team>(partials, reduction_set);
  }
}

// Loads `tile` and reduces it to the aggregate its owner's row_tile_local_scan posts: the
// elements from the tile's last row start on (or all of them), in reduction order.
template <class M, int VPT, bool kSegments = false, class Team = WholeBlock, int kSets>
__device__ __forceinline__ typename M::T load_and_reduce_rows(
    const typename M::T* in, std::uint64_t n, std::uint32_t tile,
    BlockPartials<typename M::T, kSets>& partials, int set, const RowPositions& pos,
    const TileSegments* segments, typename M::T row_init) {
  using T = typename M::T;
  using Shape = TileShape<T, VPT, Team>;
  Vector<T> loaded[VPT];
  load_tile<T, VPT, Team>(in, n, tile, M::identity(), loaded);
  const std::uint64_t first = Shape::first(tile);
  const TileLastStart last_start =
      tile_last_start<T, VPT, Team, kSegments>(pos, segments, n, first);
  T total = M::identity();
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    add_to_row_total<M>(total, loaded[k], Shape::row_offset(k), last_start, row_init);
  }
  block_scan_totals<M, Team>(partials, set, warp_last(warp_inclusive_scan<M>(total)));
  return block_total<M, Team>(partials, set);
}

// A segmented reduction's empty segments from entry j on that start (and end) at element
// `at`: their total is the init value. Each is written beside the end of the segment
// before it (or, before the run's first element, by that element), so that none is missed.
template <class T>
__device__ __forceinline__ void store_empty_segments(T* out, const SegmentList& list,
                                                     std::uint32_t j, std::uint32_t at,
                                                     T row_init) {
  while (j + 1 < list.count && list.start(j) == at && list.start(j + 1) == at) {
    out[j] = row_init;
    ++j;
  }
}

// A reduction's outputs in vector `v` (element p of the tile from `first`, each element
// scanned from its row's start): each row's total, by its last element. Uniform rows are
// counted from the row of the run's element 0; a segment's output is that of its entry in
// the list (out[-1] for the segment open at the run's element 0).
template <class M, bool kSegments>
__device__ __forceinline__ void store_row_totals(typename M::T* out, std::uint64_t n,
                                                 std::uint64_t first, std::uint32_t p,
                                                 const Vector<typename M::T>& v,
                                                 const RowPositions& pos,
                                                 const TileSegments* segments,
                                                 typename M::T row_init) {
  constexpr int size = Vector<typename M::T>::size;
  const std::uint64_t g = first + p;
  if constexpr (kSegments) {
#pragma unroll
    for (int e = 0; e < size; ++e) {
      const auto i = static_cast<std::uint32_t>(g + e);
      if (g + e == 0) store_empty_segments(out, segments->list, 0, 0, row_init);
      if (g + e < n && (g + e == n - 1 || segments->bit(p + e + 1))) {
        // The segment's entry: the last at or before i (-1: the one open at element 0).
        const std::int64_t j = std::int64_t{segments->list.lower_bound(i + 1)} - 1;
        out[j] = v.x[e];
        store_empty_segments(out, segments->list, static_cast<std::uint32_t>(j + 1), i + 1,
                             row_init);
      }
    }
  } else {
    // The rows' ends: by the 64-bit position, off the scans' path.
    std::uint64_t row, dist;
    pos.locate(g, row, dist);
#pragma unroll
    for (int e = 0; e < size; ++e) {
      if (g + e < n && (dist == pos.length - 1 || g + e == n - 1)) out[row] = v.x[e];
      if (++dist == pos.length) {
        dist = 0;
        ++row;
      }
    }
  }
}

// Writes the owned tile of a batched scan, whose predecessors in the row of its first
// element reduce to `tile_prefix`: per element its inclusive or exclusive scan within its
// row, or for a reduction each row's total, by the row's last element (store_row_totals).
template <class M, int VPT, bool kSegments = false, class Team = WholeBlock, int kSets>
__device__ __forceinline__ void store_tile_rows(
    typename M::T* out, std::uint64_t n, std::uint32_t tile, Kind kind, typename M::T tile_prefix,
    const BlockPartials<typename M::T, kSets>& partials, const RowFlags<kSets>& flags, int set,
    const Vector<typename M::T> (&rows)[VPT], const RowPositions& pos, const TileSegments* segments,
    typename M::T row_init) {
  using T = typename M::T;
  using Shape = TileShape<T, VPT, Team>;
  constexpr int size = Vector<T>::size;
  const int warp = warp_id();
  const std::uint64_t first = Shape::first(tile);
  const TileRows tile_rows = pos.in_tile(first, kWarpSize * size);
  const std::uint32_t block_first = Shape::row_offset(0) - lane_id() * size;  // in the tile
  // What precedes the elements whose row began before this warp's block: the warps since
  // that row's start, and the tile's prefix if the row began before the tile.
  const T warp_prefix = warp == 0 ? M::identity() : partials.warp_totals[set][warp - 1];
  const bool row_before_tile = (flags.start_warps[set] & ((1u << warp) - 1u)) == 0;
  const T open_prefix = row_before_tile ? M::combine(tile_prefix, warp_prefix) : warp_prefix;
  // Segments: the block's elements before its first segment start are in the open row.
  std::uint32_t open_end = 0;
  if constexpr (kSegments) open_end = segments->first_start_in(block_first, kWarpSize * VPT * size);
  T before = open_prefix;  // exclusive: the inclusive value of the element before a vector
  std::uint32_t d0 = tile_rows.distance(Shape::row_offset(0));
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    const std::uint32_t p = Shape::row_offset(k);
    Vector<T> v = rows[k];
    std::uint32_t row_starts;
    if constexpr (kSegments) {
      row_starts = segments->vector_bits(p, size);
#pragma unroll
      for (int e = 0; e < size; ++e) {
        if (p + e < open_end) v.x[e] = M::combine(open_prefix, v.x[e]);
      }
    } else {
      if (k > 0) d0 = tile_rows.advance(d0);
      row_starts = row_start_bits(d0, p, tile_rows, Shape::elements(), size);
      // Only elements before the vector's first row start can have begun before the block.
      const bool began_before_block = d0 > p - block_first;
      // Elements before the vector's first row start (past n: never stored).
      const std::uint32_t to_start = d0 == 0 ? 0 : tile_rows.span - d0;
#pragma unroll
      for (int e = 0; e < size; ++e) {
        if (began_before_block && e < to_start) v.x[e] = M::combine(open_prefix, v.x[e]);
      }
    }
    if (kind == Kind::reduce) {
      store_row_totals<M, kSegments>(out, n, first, p, v, pos, segments, row_init);
      continue;
    }
    if (kind == Kind::exclusive) {
      const T previous_lane = __shfl_up_sync(kFullMask, v.last(), 1);
      if (lane_id() != 0) before = previous_lane;
      Vector<T> shifted;
#pragma unroll
      for (int e = 0; e < size; ++e) {
        shifted.x[e] = ((row_starts >> e) & 1u) != 0 ? row_init : (e == 0 ? before : v.x[e - 1]);
      }
      store_row<T, VPT, Team>(out, n, tile, k, shifted);
      before = warp_last(v.last());
    } else {
      store_row<T, VPT, Team>(out, n, tile, k, v);
    }
  }
}

}  // namespace gpuscan::cuda
