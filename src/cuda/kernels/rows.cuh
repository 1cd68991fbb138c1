// Where rows start in a batched scan's flattened input (DESIGN 3f): B rows of N elements,
// row-major, scanned in one pass. Each element knows its distance from its row's start by
// arithmetic, so the kernel reads nothing but the data. docs/protocol.md, "Batched scans",
// gives the rules the look-back follows.
#pragma once

#include <cstdint>

#include "cuda/launch.hpp"

namespace gpuscan::cuda {

// Where rows start within one tile, in 32-bit arithmetic: element p of the tile (its offset
// from the tile's first element) lies (p + shift) % span from its row's start. span is the
// row length, capped at 2^31 (a row that long starts at most once in a tile), and shift
// puts the tile's first row start where it is (with a capped span and no start in the tile,
// the first start lands past the tile). The per-element work of a batched scan is then a
// few 32-bit operations (the 64-bit reciprocal runs once a tile).
struct TileRows {
  std::uint32_t span;
  std::uint32_t shift;
  std::uint32_t step;  // (kWarpSize * vector size) % span: from one of a thread's rows to the next

  __device__ __forceinline__ std::uint32_t distance(std::uint32_t p) const {
    return (p + shift) % span;
  }
  // The distance of the element `step` further on, from that of this one.
  __device__ __forceinline__ std::uint32_t advance(std::uint32_t d) const {
    d += step;
    return d >= span ? d - span : d;
  }
  // The distance of the next element.
  __device__ __forceinline__ std::uint32_t next(std::uint32_t d) const {
    return d + 1 == span ? 0 : d + 1;
  }
};

struct RowPositions {
  std::uint64_t length;  // N >= 1
  std::uint64_t phase;   // where element 0 of the run lies in its row
  std::uint64_t magic;   // floor((2^64 - 1) / N)

  __device__ __forceinline__ explicit RowPositions(const RowArgs& rows)
      : length(rows.length), phase(rows.phase), magic(rows.magic) {}

  // Element g's row (counted from the run's first) and its distance from that row's start,
  // without a division: the reciprocal's quotient is exact or one short (Granlund and
  // Montgomery's bound: magic * N > 2^64 - 1 - N), so one correction finishes it.
  __device__ __forceinline__ void locate(std::uint64_t g, std::uint64_t& row,
                                         std::uint64_t& distance) const {
    const std::uint64_t x = g + phase;
    std::uint64_t q = __umul64hi(x, magic);
    std::uint64_t r = x - q * length;
    if (r >= length) {
      r -= length;
      ++q;
    }
    row = q;
    distance = r;
  }
  __device__ __forceinline__ std::uint64_t distance(std::uint64_t g) const {
    std::uint64_t row, d;
    locate(g, row, d);
    return d;
  }

  // The rows of the tile that begins at element `first`, for rows of `stride` elements
  // apart (kWarpSize * vector size).
  __device__ __forceinline__ TileRows in_tile(std::uint64_t first, std::uint32_t stride) const {
    constexpr std::uint64_t cap = std::uint64_t{1} << 31;
    const std::uint64_t d = distance(first);
    const auto span = static_cast<std::uint32_t>(length < cap ? length : cap);
    const std::uint64_t to_start = d == 0 ? 0 : length - d;
    const auto first_start =
        static_cast<std::uint32_t>(to_start < span ? to_start : span - 1);  // past the tile
    return {span, first_start == 0 ? 0 : span - first_start, stride % span};
  }

  // Whether a row starts among the elements [first, first + count) that are below n: a
  // tile holding one has its inclusive value for aggregate, and a look-back ends there.
  __device__ __forceinline__ bool starts_in(std::uint64_t first, std::uint64_t count,
                                            std::uint64_t n) const {
    if (n - first < count) count = n - first;
    const std::uint64_t d = distance(first);
    return d == 0 || length - d < count;
  }
};

// Where a row-aligned tile's elements lie (AlignedRows::place): elements [first, first + n)
// of the input form the tile's row, in which it is tile `tile` of `tile_count`; `row_start`:
// the tile begins its row, so its look-back ends before it starts; a reduction writes the
// row's total at out[row].
struct TilePlace {
  std::uint64_t first;
  std::uint64_t n;
  std::uint64_t row;
  std::uint32_t tile;
  std::uint32_t tile_count;
  bool row_start;
};

// A batched scan on row-aligned tiles (DESIGN 3f; docs/protocol.md, "Row-aligned tiles"):
// row r takes tiles r * tiles_per_row .. (r + 1) * tiles_per_row - 1 of the run, the last
// of them part full. Only the row's first tile holds a row start, at its first element.
struct AlignedRows {
  std::uint64_t length;  // N, whose rows start 16-byte aligned (the launcher's condition)
  std::uint32_t tiles_per_row;
  std::uint32_t magic;  // floor((2^32 - 1) / tiles_per_row)

  __device__ __forceinline__ explicit AlignedRows(const RowArgs& rows)
      : length(rows.length), tiles_per_row(rows.tiles_per_row), magic(rows.tile_magic) {}

  // Tile indices are below 2^31, so the reciprocal's quotient is exact or one short (as in
  // RowPositions::locate) and one correction finishes it.
  __device__ __forceinline__ TilePlace place(std::uint32_t tile) const {
    std::uint32_t row = __umulhi(tile, magic);
    std::uint32_t t = tile - row * tiles_per_row;
    if (t >= tiles_per_row) {
      t -= tiles_per_row;
      ++row;
    }
    return {std::uint64_t{row} * length, length, row, t, tiles_per_row, t == 0};
  }
};

// A segmented scan's segment starts (RowArgs::segment_offsets; docs/protocol.md, "Segmented
// scans"). The owner of a tile marks those among its elements in a bitmap in shared memory
// first (load_segment_bits); a fallback needs only its tile's last start, which binary
// searches find. Run-local indices: a segmented run holds fewer than 2^32 elements.
struct SegmentList {
  const std::int64_t* offsets;
  std::int64_t base;
  std::uint32_t count;

  __device__ __forceinline__ explicit SegmentList(const RowArgs& rows)
      : offsets(rows.segment_offsets), base(rows.segment_base), count(rows.segment_count) {}

  // Entry j's start, run-local.
  __device__ __forceinline__ std::uint32_t start(std::uint32_t j) const {
    return static_cast<std::uint32_t>(__ldg(offsets + j) - base);
  }

  // The first entry at or after element x (count where none is).
  __device__ __forceinline__ std::uint32_t lower_bound(std::uint32_t x) const {
    std::uint32_t lo = 0, hi = count;
    while (lo < hi) {
      const std::uint32_t mid = (lo + hi) / 2;
      if (start(mid) < x) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  // Whether a segment starts among the elements [first, first + count) below n, and the
  // last such start as an offset from `first`.
  __device__ __forceinline__ bool last_start_in(std::uint32_t first, std::uint32_t elements,
                                                std::uint64_t n, std::uint32_t& at) const {
    const auto end = static_cast<std::uint32_t>(n - first < elements ? n : first + elements);
    const std::uint32_t hi = lower_bound(end);
    const bool starts_here = hi > 0 && start(hi - 1) >= first;
    at = starts_here ? start(hi - 1) - first : 0;
    return starts_here;
  }
};

// The owned tile's segment starts as bits in shared memory (`words`): bit p for tile
// element p, and bit `elements` for the next tile's first element (where a reduction's last
// segment of the tile ends). A segmented kernel's row functions see them with the list.
struct TileSegments {
  SegmentList list;
  const std::uint32_t* words;

  __device__ __forceinline__ bool bit(std::uint32_t p) const {
    return ((words[p / 32] >> (p % 32)) & 1u) != 0;
  }
  // The bits of the `size` elements from tile element p (p a multiple of size).
  __device__ __forceinline__ std::uint32_t vector_bits(std::uint32_t p, int size) const {
    return (words[p / 32] >> (p % 32)) & ((1u << size) - 1u);
  }
  // The first start among tile elements [lo, lo + count), or lo + count where none is.
  __device__ __forceinline__ std::uint32_t first_start_in(std::uint32_t lo,
                                                          std::uint32_t count) const {
    std::uint32_t found = lo + count;
    for (std::uint32_t p = lo & ~31u; p < lo + count; p += 32) {
      std::uint32_t w = words[p / 32];
      if (p < lo) w &= ~0u << (lo - p);
      if (p + 32 > lo + count) w &= (1u << (lo + count - p)) - 1u;
      if (w != 0) found = min(found, p + __ffs(w) - 1);
    }
    return found;
  }
};

// Marks the starts of the tile of `elements` elements from `first` in `words` (elements / 32
// + 1 of them), the whole block.
__device__ __forceinline__ void load_segment_bits(std::uint32_t* words, const SegmentList& list,
                                                  std::uint32_t first, std::uint32_t elements,
                                                  std::uint64_t n) {
  for (std::uint32_t w = threadIdx.x; w <= elements / 32; w += blockDim.x) words[w] = 0;
  __syncthreads();
  const auto end = static_cast<std::uint32_t>(n - first < elements ? n : first + elements);
  const std::uint32_t lo = list.lower_bound(first);
  const std::uint32_t hi = end < n ? list.lower_bound(end + 1) : list.lower_bound(end);
  for (std::uint32_t j = lo + threadIdx.x; j < hi; j += blockDim.x) {
    const std::uint32_t p = list.start(j) - first;
    atomicOr(&words[p / 32], 1u << (p % 32));
  }
  __syncthreads();
}

}  // namespace gpuscan::cuda
