// Tuning as data: each backend keeps a table of ScanPolicy rows, one per kind of device and
// element size, with the reason for its numbers, and its launchers read their defaults
// from the row that matches (src/cuda/policy.cpp, src/vulkan/policy.cpp). Options in
// gpuscan/testing.hpp override a row for tests and experiments.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string_view>

namespace gpuscan::detail {

struct TileShapePolicy {
  std::uint32_t workgroup_size = 0;
  std::uint32_t vectors_per_thread = 0;  // of 16 bytes each
};

// Runs of `min` to `max` tiles (inclusive); max 0: none.
struct TileCountRange {
  std::uint64_t min = 0;
  std::uint64_t max = 0;
  bool holds(std::uint64_t tiles) const { return max != 0 && tiles >= min && tiles <= max; }
};

struct ScanPolicy {
  std::string_view devices;     // which devices the row is for (the backend matches it)
  std::size_t element_bytes;    // 4 or 8
  TileShapePolicy shape;        // tiles of inputs from small_below_bytes on
  TileShapePolicy small_shape;  // tiles of smaller inputs (unused where small_below_bytes is 0)
  std::size_t small_below_bytes;
  // Windows a look-back step reads; 0: chosen per launch (CUDA: every window of a launch
  // whose blocks are all resident, up to its limit; otherwise 1).
  std::uint32_t lookback_depth;
  // csdldf takes tiles in dispatch order (the workgroup id) rather than from a counter.
  bool dispatch_order;
  std::string_view reason;  // what was measured (docs/performance.md has the numbers)
  // Tiles of batched scans (DESIGN 3f), whose segmented tile scan needs other registers;
  // zero: `shape`.
  TileShapePolicy rows_shape{};
  // A row for floating-point types only (placed before the row of their element size).
  bool floats_only = false;
  // Tiles of the compaction kernels (DESIGN 3e), where the backend takes them from this
  // table (Vulkan; CUDA has a table per operation); zero: `shape`.
  TileShapePolicy compaction_shape{};
  // Run-length encoding's tiles (its tile value and write differ); zero: compaction_shape.
  TileShapePolicy compaction_runs_shape{};
  // In-place compaction's tiles (select and unique), which stage values, not positions;
  // zero: compaction_shape.
  TileShapePolicy compaction_in_place_shape{};
  // Batched runs on row-aligned tiles of this many tiles claim them round the rows, tile k
  // of every row before tile k + 1 of any (docs/protocol.md, "Row-aligned tiles"); the
  // others row by row. Vulkan only.
  TileCountRange round_rows{};
};

// Batched runs whose rows are at least this many tiles long (and a whole number of 16-byte
// vectors, from a row's start) take row-aligned tiles (docs/protocol.md, "Row-aligned
// tiles"): at most one tile in four is part full, and the row-free tiles run the plain
// scan's code. A spine sized for the plain scan's tiles of n elements plus
// n / (kAlignedMinTilesPerRow * tile) holds them.
inline constexpr std::uint64_t kAlignedMinTilesPerRow = 4;

// The tiles of a batched run of n elements on row-aligned tiles of `tile_elements`, or 0
// where its rows do not take them: whole rows of `length` from a row's start (`phase` 0), a
// whole number of 16-byte vectors of `element_bytes`-byte elements, at least
// kAlignedMinTilesPerRow tiles long. Each row takes ceil(length / tile_elements) tiles.
inline std::uint64_t aligned_row_tiles(std::uint64_t n, std::uint64_t length, std::uint64_t phase,
                                       std::size_t element_bytes, std::uint64_t tile_elements) {
  if (length == 0 || phase != 0 || n % length != 0 || length * element_bytes % 16 != 0 ||
      length < kAlignedMinTilesPerRow * tile_elements) {
    return 0;
  }
  return n / length * ((length + tile_elements - 1) / tile_elements);
}

// The first row for `devices`, the element size and the kind of type; a table ends with
// rows for "any".
inline const ScanPolicy& find_policy(std::span<const ScanPolicy> table, std::string_view devices,
                                     std::size_t element_bytes, bool floating = false) {
  for (const ScanPolicy& row : table) {
    if ((row.devices == devices || row.devices == "any") && row.element_bytes == element_bytes &&
        (!row.floats_only || floating))
      return row;
  }
  throw std::logic_error("no tuning policy for this device and element size");
}

}  // namespace gpuscan::detail
