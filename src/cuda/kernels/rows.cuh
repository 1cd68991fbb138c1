// Where rows start in a batched scan's flattened input (DESIGN 3f): B rows of N elements,
// row-major, scanned in one pass. Each element knows its distance from its row's start by
// arithmetic, so the kernel reads nothing but the data. docs/protocol.md, "Batched scans",
// gives the rules the look-back follows.
#pragma once

#include <cstdint>

#include "cuda/launch.hpp"

namespace gpuscan::cuda {

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
