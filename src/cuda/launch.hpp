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

// Threads per block times elements per thread: VPT rows of 16-byte vectors per thread
// (compiled for 4, 6 and 8; the persistent chained scan for 4 and 8). By default 16
// elements a thread (4 rows of 32-bit types, 8 of 64-bit ones), and for a chained scan of
// a block per tile 6 rows of any type (docs/performance.md, C34).
inline std::uint32_t default_vectors_per_thread(DType dtype, bool per_tile) {
  if (per_tile) return 6;
  return static_cast<std::uint32_t>(size_of(dtype));
}
constexpr std::uint32_t kDefaultBlockSize = 256;
constexpr int kMaxLookbackDepth = 4;
// Tiles a persistent block of the chained scan holds in shared memory: the one waiting for
// its prefix, the one it scans, and slots - 2 whose input is on its way.
constexpr std::uint32_t kMinStagedTiles = 2;
// staged_tiles 1: no persistent blocks and no staging, one block per tile that loads it
// straight into registers and looks back with its first warp (per_tile_scan.cuh).
constexpr std::uint32_t kPerTileBlocks = 1;
constexpr std::uint32_t kPerTileBlockLimit = 512;
constexpr std::uint32_t kMaxStagedTiles = 4;
// The largest block a tile shape is compiled for: 64 registers a thread for 4 rows, 128
// for 8 (fewer would spill).
constexpr std::uint32_t max_block_size(std::uint32_t vectors_per_thread) {
  return 4096 / vectors_per_thread;
}
// The chained scan's blocks have a look-back warp beside their tile warps.
constexpr std::uint32_t kLookBackThreads = 32;
constexpr std::uint32_t chained_block_limit(std::uint32_t vectors_per_thread) {
  return max_block_size(vectors_per_thread) + kLookBackThreads > 1024
             ? 1024
             : max_block_size(vectors_per_thread) + kLookBackThreads;
}
inline std::uint32_t tile_elements(DType dtype, std::uint32_t block_size,
                                   std::uint32_t vectors_per_thread) {
  return block_size * vectors_per_thread * static_cast<std::uint32_t>(16 / size_of(dtype));
}

// The threads that scan a tile and the rows of 16-byte vectors each holds.
struct TileShapeChoice {
  std::uint32_t block_size = kDefaultBlockSize;
  std::uint32_t vectors_per_thread = 4;
};
// The persistent chained scan's shape for inputs of kLargeInputBytes or more, unless the
// tuning fixes one: tiles of 60 KB, one block of 480 tile threads and a look-back warp per
// SM. The look-back warp is the limit with small tiles (it walks about 4 steps per tile
// whatever the tile's size), so larger tiles do more with each walk (docs/performance.md,
// C14). Smaller inputs keep 4 KB-per-warp tiles, which spread a few tiles over more SMs.
constexpr TileShapeChoice kLargeInputShape{480, 8};
constexpr std::uint64_t kLargeInputBytes = std::uint64_t{32} << 20;
// A block per tile takes 16 KB tiles for inputs under kSmallInputBytes, unless the tuning
// fixes a shape: the loads of more, smaller tiles are in flight at once, 0.3-0.5 us sooner
// done from 2^13 to 2^18 u32 on an H100; from 2^22 on the larger tiles are faster
// (docs/performance.md, C33).
constexpr TileShapeChoice kSmallInputShape{256, 4};
constexpr std::uint64_t kSmallInputBytes = std::uint64_t{8} << 20;

struct ScanArgs {
  const void* in = nullptr;
  void* out = nullptr;
  std::uint64_t n = 0;
  std::uint32_t tile_count = 0;
  std::uint32_t block_size = kDefaultBlockSize;
  std::uint32_t vectors_per_thread = 4;
  Kind kind = Kind::inclusive;
  std::uint64_t init_bits = 0;
};

// The tile chain of csdl/csdldf. `spine` is all zeros on entry; the run zeroes the first
// `next_spine_words` 32-bit words of `next_spine` and all of `next_control` for the next.
struct ChainArgs {
  void* spine = nullptr;
  std::uint32_t* next_spine = nullptr;
  std::uint64_t next_spine_words = 0;
  RunControl* control = nullptr;
  RunControl* next_control = nullptr;
  std::uint32_t max_spins = 4;
  std::uint32_t blocking_mask = 0xFFFFFFFFu;
  // Windows one look-back step reads, up to kMaxLookbackDepth; 0: the launch picks
  // (kernels.cu, lookback_depth_for).
  int lookback_depth = 0;
  // kPerTileBlocks, or per persistent block kMinStagedTiles .. kMaxStagedTiles; 0 (set by
  // the launch): one round of the persistent kernel, whose blocks take one tile each,
  // load it straight into registers and park it in one slot.
  std::uint32_t staged_tiles = kPerTileBlocks;
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
};

template <class T>
void launch_chained_scan(Op op, const ScanArgs& scan, const ChainArgs& chain, cudaStream_t stream);
// Three launches: tile reductions into `spine` (tile_count elements), their scan, the scan.
template <class T>
void launch_reduce_then_scan(Op op, const ScanArgs& scan, void* spine, cudaStream_t stream);
template <class T>
void launch_check(Op op, const CheckArgs& check, cudaStream_t stream);
void launch_fill(std::uint32_t* words, std::uint64_t count, std::uint32_t value,
                 cudaStream_t stream);

// cub::DeviceScan / DeviceReduce with cuda::std::plus, the baseline of the benchmark.
std::size_t cub_temp_bytes(DType dtype, Kind kind, std::uint64_t n);
void launch_cub_sum(DType dtype, Kind kind, const void* in, void* out, std::uint64_t n, void* temp,
                    std::size_t temp_bytes, cudaStream_t stream);

}  // namespace gpuscan::cuda
