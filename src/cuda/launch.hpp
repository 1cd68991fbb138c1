// What the host passes to the CUDA kernels, and the launchers that kernels.cu instantiates
// once per element type. Plain C++: the host files include it without CUDA's compiler.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gpuscan/scanner.hpp"
#include "gpuscan/types.hpp"
#include "shaders/common/interface.h"

namespace gpuscan::cuda {

// Counters of one chained-scan run, in device memory. A run counts into its own block and
// zeroes the other one for the run after it, so no reset needs a launch of its own.
struct RunControl {
  std::uint32_t tile_counter;
  std::uint32_t abandoned;  // csdl look-backs that gave up waiting
  std::uint32_t spins;      // the four statistics (statistics variant only)
  std::uint32_t lookback_steps;
  std::uint32_t fallbacks;
  std::uint32_t insertions;
  // The starvation mark: set by a fallback that inserted into a tile nobody had posted, so
  // that later look-backs of the run wait less (docs/protocol.md, "The starvation mark").
  std::uint32_t starved;
  std::uint32_t unused;  // the Vulkan validation count's word

  Statistics statistics() const { return {spins, lookback_steps, fallbacks, insertions}; }
};
// The same words, in the same order, as the Vulkan control buffer.
static_assert(offsetof(RunControl, tile_counter) == 4 * GS_CONTROL_TILE_COUNTER);
static_assert(offsetof(RunControl, abandoned) == 4 * GS_CONTROL_LOOKBACK_ABANDONED);
static_assert(offsetof(RunControl, spins) == 4 * GS_CONTROL_SPINS);
static_assert(offsetof(RunControl, lookback_steps) == 4 * GS_CONTROL_LOOKBACK_STEPS);
static_assert(offsetof(RunControl, fallbacks) == 4 * GS_CONTROL_FALLBACKS);
static_assert(offsetof(RunControl, insertions) == 4 * GS_CONTROL_INSERTIONS);
static_assert(offsetof(RunControl, starved) == 4 * GS_CONTROL_STARVED);
static_assert(sizeof(RunControl) == 4 * GS_CONTROL_WORDS);

// The head of a chained scan's workspace, in device memory: which half of the tile state
// the next run works in and what each half holds, so that no host-side state tells a run
// where to work, and a launch recorded once (a CUDA graph) can be replayed
// (docs/protocol.md, "Reset between runs"). A run works in half `turn`, zeroes what the run
// before it wrote in the other half, and the last of its blocks to start hands the turn on.
struct ChainState {
  RunControl control[2];  // per half: the counters of the run that works in it
  std::uint32_t turn;     // the half the next run works in (0 or 1)
  std::uint32_t unused;
  std::uint64_t dirty[2];  // 32-bit words of each half that its last run wrote
  // Blocks of the running launch that have read `turn`: every block adds to it, so it has
  // a cache line of its own, away from the words every look-back reads (the mark).
  alignas(128) std::uint32_t started;
  // The counters of the latest finished run (read once the stream has passed it).
  const RunControl& last_counts() const { return control[turn ^ 1u]; }
};
// The spine's halves follow the head at this offset, and each other at a multiple of it.
constexpr std::size_t kSpineOffset = 256;
static_assert(sizeof(ChainState) <= kSpineOffset);

// Tile shapes: threads per block times rows of 16-byte vectors a thread (the kernels are
// compiled for 4, 6 and 8 rows). Defaults come from the policy table (cuda/policy.cpp).
constexpr std::uint32_t kDefaultBlockSize = 256;
// Batched and segmented scans are compiled for one row count a type, a third of the objects
// of every row count (the build's longest step): 6 for 4-byte types, whose segmented tile
// scan spills 16-40 bytes at 64 registers and still runs 2-5% faster than 4 rows on every
// shape of the batched table (80 registers, no spills but three blocks a multiprocessor,
// is slower); 4 for 8-byte types (docs/performance.md B2, B3, B8).
constexpr std::uint32_t rows_vectors_per_thread(std::size_t element_bytes) {
  return element_bytes == 4 ? 6 : 4;
}
constexpr int kMaxLookbackDepth = 4;
// The largest block a tile shape is compiled for: 64 registers a thread for 4 rows, 128
// for 8 (fewer would spill). The chained scan's blocks have at most 512 threads
// (per_tile_scan.cuh's launch bounds).
constexpr std::uint32_t max_block_size(std::uint32_t vectors_per_thread) {
  return 4096 / vectors_per_thread;
}
constexpr std::uint32_t kPerTileBlockLimit = 512;
inline std::uint32_t tile_elements(DType dtype, std::uint32_t block_size,
                                   std::uint32_t vectors_per_thread) {
  return block_size * vectors_per_thread * static_cast<std::uint32_t>(16 / size_of(dtype));
}

// The threads that scan a tile and the rows of 16-byte vectors each holds.
struct TileShapeChoice {
  std::uint32_t block_size = kDefaultBlockSize;
  std::uint32_t vectors_per_thread = 4;
};

// A batched scan's rows (DESIGN 3f): the init value applies at each row start.
// length 0: one scan over all n elements.
// A segmented scan (CSR offsets) reads its rows' starts instead: `segment_count` ascending
// entries at `segment_offsets` (64-bit, device memory), entry j's start being run-local
// element offsets[j] - segment_base, one per segment that starts in [0, n] (repeated for
// empty segments); a reduction writes the segment of entry j at out[j] (out[-1]: the
// segment open at the run's element 0).
struct RowArgs {
  std::uint64_t length = 0;
  std::uint64_t phase = 0;      // where the run's element 0 lies in its row (a continued row)
  std::uint64_t magic = 0;      // floor((2^64 - 1) / length), for rows.cuh
  std::uint64_t lead_bits = 0;  // with phase != 0: what precedes element 0 in its row
  const std::int64_t* segment_offsets = nullptr;
  std::int64_t segment_base = 0;
  std::uint32_t segment_count = 0;
  bool segments = false;
  // Row-aligned tiles (rows.cuh, AlignedRows) where tiles_per_row != 0: each row takes
  // tiles_per_row tiles of its own.
  std::uint32_t tiles_per_row = 0;
  std::uint32_t tile_magic = 0;  // floor((2^32 - 1) / tiles_per_row)
};

// The rows of a batched run: `length` >= 1 elements each, element 0 at `phase` in its row,
// after what `lead_bits` holds.
inline RowArgs row_args(std::uint64_t length, std::uint64_t phase, std::uint64_t lead_bits) {
  return {length, phase, ~std::uint64_t{0} / length, lead_bits};
}

// `rows` (phase 0) on row-aligned tiles of `tile_elements` elements.
inline RowArgs on_aligned_tiles(RowArgs rows, std::uint32_t tile_elements) {
  rows.tiles_per_row =
      static_cast<std::uint32_t>((rows.length + tile_elements - 1) / tile_elements);
  rows.tile_magic = ~std::uint32_t{0} / rows.tiles_per_row;
  return rows;
}

// The segments of a segmented run (the row length is unused; 1 keeps rows.cuh's arithmetic
// defined); `lead_bits` precedes element 0 where no segment starts there.
inline RowArgs segment_args(const std::int64_t* offsets, std::int64_t base, std::uint32_t count,
                            std::uint64_t lead_bits) {
  RowArgs rows = row_args(1, 0, lead_bits);
  rows.segment_offsets = offsets;
  rows.segment_base = base;
  rows.segment_count = count;
  rows.segments = true;
  return rows;
}

struct ScanArgs {
  const void* in = nullptr;
  void* out = nullptr;
  std::uint64_t n = 0;
  std::uint32_t tile_count = 0;
  std::uint32_t block_size = kDefaultBlockSize;
  std::uint32_t vectors_per_thread = 4;
  Kind kind = Kind::inclusive;
  std::uint64_t init_bits = 0;
  const void* init = nullptr;  // where set, the init value is read here (device memory)
  RowArgs rows{};
};

// The tile chain of csdl/csdldf: the workspace (a ChainState, then the spine's two halves
// of half_words 32-bit words each) and the run's fixed parameters.
struct ChainArgs {
  ChainState* state = nullptr;
  std::uint32_t* spines = nullptr;
  std::uint64_t half_words = 0;
  std::uint32_t max_spins = 4;
  std::uint32_t blocking_mask = 0xFFFFFFFFu;
  // Windows one look-back step reads, up to kMaxLookbackDepth; 0: the launch picks
  // (kernels.cu, lookback_depth_for).
  int lookback_depth = 0;
  bool dispatch_order = false;  // tile = block id instead of the counter (csdldf)
  bool fallback = true;         // csdldf; false: csdl
  bool packed = false;          // 64-bit tile words, one lane per tile
  bool statistics = false;      // the counting variant
};

// 32-bit words of spine one tile takes, in either tile state: 16 value bits per split
// word, 32 per packed 64-bit word.
inline std::uint32_t spine_words_per_tile(DType dtype) {
  return static_cast<std::uint32_t>(size_of(dtype) / 2);
}

// The device check of a run: mismatches are added to *errors.
struct CheckArgs {
  const void* in = nullptr;
  const void* out = nullptr;
  std::uint64_t n = 0;
  Kind kind = Kind::inclusive;
  std::uint64_t init_bits = 0;
  bool copy = false;    // out must equal in (the memcpy baseline)
  float tolerance = 0;  // float sums and products, as the Vulkan validation kernel
  std::uint32_t* errors = nullptr;
  std::uint64_t row_length = 0;  // a batched scan: each row starts from init
};

template <class T>
void launch_chained_scan(Op op, const ScanArgs& scan, const ChainArgs& chain, cudaStream_t stream);
// The same for a batched scan (scan.rows.length != 0), from row_kernels.cu.
template <class T>
void launch_chained_rows(Op op, const ScanArgs& scan, const ChainArgs& chain, cudaStream_t stream);
// The same on row-aligned tiles (scan.rows.tiles_per_row != 0), from aligned_row_kernels.cu.
template <class T>
void launch_chained_aligned_rows(Op op, const ScanArgs& scan, const ChainArgs& chain,
                                 cudaStream_t stream);
template <class T>
void launch_chained_segments(Op op, const ScanArgs& scan, const ChainArgs& chain,
                             cudaStream_t stream);
// Three launches: tile reductions into `spine` (tile_count elements), their scan, the scan.
template <class T>
void launch_reduce_then_scan(Op op, const ScanArgs& scan, void* spine, cudaStream_t stream);
template <class T>
void launch_check(Op op, const CheckArgs& check, cudaStream_t stream);
void launch_fill(std::uint32_t* words, std::uint64_t count, std::uint32_t value,
                 cudaStream_t stream);
// Checks a segmented scan's CSR offsets (segments + 1 int64 values: 0 first, n last, not
// decreasing) on the device; a bad one stops the stream's work with a trap (segment_offsets.cu).
void launch_check_segment_offsets(const std::int64_t* offsets, std::uint64_t segments,
                                  std::uint64_t n, cudaStream_t stream);
// Writes `count` elements of `bytes` (4 or 8): `bits`, or where `from` is set, the element
// there.
void launch_store_value(void* out, std::size_t bytes, std::uint64_t bits, const void* from,
                        cudaStream_t stream, std::uint64_t count = 1);

// cub::DeviceScan / DeviceReduce with cuda::std::plus, the baseline of the benchmark.
std::size_t cub_temp_bytes(DType dtype, Kind kind, std::uint64_t n);
void launch_cub_sum(DType dtype, Kind kind, const void* in, void* out, std::uint64_t n, void* temp,
                    std::size_t temp_bytes, cudaStream_t stream);
// cub::DeviceScan::InclusiveSumByKey / ExclusiveSumByKey with each element's row as its key
// (computed, not read): the batched scan's baseline (inclusive and exclusive only).
std::size_t cub_rows_temp_bytes(DType dtype, Kind kind, std::uint64_t n, std::uint64_t row_length);
void launch_cub_rows_sum(DType dtype, Kind kind, const void* in, void* out, std::uint64_t n,
                         std::uint64_t row_length, void* temp, std::size_t temp_bytes,
                         cudaStream_t stream);

}  // namespace gpuscan::cuda
