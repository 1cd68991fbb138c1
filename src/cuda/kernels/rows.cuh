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

}  // namespace gpuscan::cuda
