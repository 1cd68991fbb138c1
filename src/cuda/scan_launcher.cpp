#include "cuda/scan_launcher.hpp"

#include <algorithm>
#include <string>

#include "core/options.hpp"
#include "core/reference.hpp"

namespace gpuscan::cuda {
namespace {

// Look-back steps without progress before csdl gives up: on a GPU with forward progress a
// wait never comes near this.
constexpr std::uint32_t csdl_wait_limit = 1u << 22;

// Reduce-then-scan reads its input twice and has no tile chain to tune: 16 elements a
// thread, the shape it was measured with.
TileShapeChoice rts_shape(DType dtype) {
  return {kDefaultBlockSize, static_cast<std::uint32_t>(size_of(dtype))};
}

void check_shape(const TileShapeChoice& shape, bool chained) {
  const std::uint32_t rows = shape.vectors_per_thread;
  if (rows != 4 && rows != 6 && rows != 8) {
    throw UsageError("the CUDA kernels take 4, 6 or 8 vectors (16 bytes each) per thread");
  }
  const std::uint32_t limit =
      chained ? std::min(max_block_size(rows), kPerTileBlockLimit) : max_block_size(rows);
  if (shape.block_size % 32 != 0 || shape.block_size < 64 || shape.block_size > limit) {
    throw UsageError("CUDA blocks of " + std::to_string(rows) +
                     " vectors per thread must be a multiple of 32 in [64, " +
                     std::to_string(limit) + "], not " + std::to_string(shape.block_size));
  }
}

}  // namespace

void check_cuda_options(const testing::Options& options) {
  if (options.subgroup_size != 0 && options.subgroup_size != 32) {
    throw UsageError("CUDA warps have 32 lanes; logical subgroups are a Vulkan test option");
  }
  if (options.lookback_depth > kMaxLookbackDepth) {
    throw UsageError("the CUDA look-back reads at most " + std::to_string(kMaxLookbackDepth) +
                     " windows per step");
  }
  if (options.round_rows.value_or(false)) {
    throw UsageError("CUDA claims row-aligned tiles row by row; round the rows is a Vulkan option");
  }
}

ChainArgs chain_for(Algorithm algorithm, const testing::Options& options,
                    const detail::ScanPolicy& policy) {
  ChainArgs chain;
  chain.fallback = algorithm == Algorithm::csdldf;
  chain.max_spins = algorithm == Algorithm::csdl ? csdl_wait_limit : options.tuning.max_spins;
  chain.blocking_mask = options.blocking_mask.value_or(0xFFFFFFFFu);
  chain.packed = options.tile_state != testing::TileState::split;
  chain.statistics = options.statistics;
  chain.lookback_depth =
      static_cast<int>(options.lookback_depth ? options.lookback_depth : policy.lookback_depth);
  chain.dispatch_order =
      options.dispatch_order.value_or(algorithm == Algorithm::csdldf && policy.dispatch_order);
  return chain;
}

ScanLauncher::ScanLauncher(DType dtype, Op op, Kind kind, Algorithm algorithm,
                           const detail::ScanPolicy& policy, const testing::Options& options)
    : dtype_(dtype), op_(op), kind_(kind), algorithm_(algorithm) {
  detail::check_options(algorithm, options);
  check_cuda_options(options);
  const bool fixed_shape = options.workgroup_size != 0 || options.vectors_per_thread != 0;
  const TileShapeChoice policy_shape{policy.shape.workgroup_size, policy.shape.vectors_per_thread};
  shape_ = chained() ? policy_shape : rts_shape(dtype);
  if (fixed_shape) {
    if (options.workgroup_size) shape_.block_size = options.workgroup_size;
    if (options.vectors_per_thread) shape_.vectors_per_thread = options.vectors_per_thread;
  } else if (chained()) {
    small_shape_ = {policy.small_shape.workgroup_size, policy.small_shape.vectors_per_thread};
    small_below_bytes_ = policy.small_below_bytes;
    if (small_below_bytes_) check_shape(small_shape_, true);
  }
  check_shape(shape_, chained());
  rows_shape_ = shape_;
  if (!fixed_shape && chained() && policy.rows_shape.workgroup_size != 0) {
    rows_shape_ = {policy.rows_shape.workgroup_size, policy.rows_shape.vectors_per_thread};
    check_shape(rows_shape_, true);
  }
  chain_ = chain_for(algorithm, options, policy);
}

std::size_t ScanLauncher::max_elements() const {
  // Tile indices are 32-bit: 2^31 tiles (2^43 elements by default), far beyond any device's
  // memory.
  const TileShapeChoice smallest = rows_shape_.vectors_per_thread * rows_shape_.block_size <
                                           shape_.vectors_per_thread * shape_.block_size
                                       ? rows_shape_
                                       : shape_;
  return (std::size_t{1} << 31) *
         tile_elements(dtype_, smallest.block_size, smallest.vectors_per_thread);
}

TileShapeChoice ScanLauncher::shape_for(std::uint64_t n, bool rows) const {
  if (rows) return rows_shape_;
  return n * size_of(dtype_) < small_below_bytes_ ? small_shape_ : shape_;
}

std::uint64_t ScanLauncher::tiles_for(std::uint64_t n, bool rows) const {
  const TileShapeChoice shape = shape_for(n, rows);
  const std::uint64_t per_tile = tile_elements(dtype_, shape.block_size, shape.vectors_per_thread);
  return (n + per_tile - 1) / per_tile;
}

std::uint64_t ScanLauncher::half_words(std::uint64_t max_n) const {
  // Row-aligned tiles add at most one part-full tile a row, and their rows hold at least
  // kAlignedMinTilesPerRow tiles. The small shape's tiles are smaller: the most tiles of
  // any n up to max_n is that of max_n or of the largest small input.
  const std::uint64_t row_tiles = tiles_for(max_n, true);
  const std::uint64_t row_tile_elements =
      tile_elements(dtype_, rows_shape_.block_size, rows_shape_.vectors_per_thread);
  std::uint64_t tiles = std::max(
      tiles_for(max_n), row_tiles + max_n / (detail::kAlignedMinTilesPerRow * row_tile_elements));
  if (small_below_bytes_ != 0) {
    const std::uint64_t small_n =
        std::min<std::uint64_t>(max_n, (small_below_bytes_ - 1) / size_of(dtype_));
    tiles = std::max(tiles, tiles_for(small_n));
  }
  const std::uint64_t words = chained() ? tiles * spine_words_per_tile(dtype_)
                                        : (tiles * size_of(dtype_) + 3) / 4;  // rts: values
  constexpr std::uint64_t granule = kSpineOffset / 4;
  return (words + granule - 1) / granule * granule;
}

// The halves' place follows from the workspace's size alone, so that every run on it finds
// the other half where the run before it left it.
std::uint64_t ScanLauncher::spine_half_words(std::size_t workspace_size) {
  constexpr std::uint64_t granule = kSpineOffset / 4;
  return (workspace_size - kSpineOffset) / 8 / granule * granule;
}

std::uint64_t ScanLauncher::aligned_tiles(std::uint64_t n, const RowArgs& rows,
                                          TileShapeChoice shape) const {
  if (rows.segments) return 0;
  const std::uint64_t tiles =
      detail::aligned_row_tiles(n, rows.length, rows.phase, size_of(dtype_),
                                tile_elements(dtype_, shape.block_size, shape.vectors_per_thread));
  return tiles < (std::uint64_t{1} << 31) ? tiles : 0;
}

std::size_t ScanLauncher::workspace_bytes(std::uint64_t max_n) const {
  const std::uint64_t halves = chained() ? 2 : 1;
  return kSpineOffset + halves * half_words(std::max<std::uint64_t>(max_n, 1)) * 4;
}

void ScanLauncher::launch(const void* in, void* out, std::uint64_t n, Value init,
                          const void* device_init, void* workspace, std::size_t workspace_size,
                          cudaStream_t stream, const RowArgs& rows) const {
  if (rows.length != 0 && !chained()) {
    throw UsageError("batched scans (rows) take the chained algorithms, csdldf or csdl, not " +
                     std::string(to_string(algorithm_)));
  }
  if (workspace_size < workspace_bytes(n)) {
    throw UsageError("a workspace of " + std::to_string(workspace_size) +
                     " bytes is too small for " + std::to_string(n) + " elements (" +
                     std::to_string(workspace_bytes(n)) + " needed: workspace_bytes(n))");
  }
  // One whole row is one scan: the plain kernels, without the segmented work.
  const bool one_row = !rows.segments && rows.length >= n && rows.phase == 0;
  const bool batched = rows.length != 0 && !one_row;
  const TileShapeChoice shape = shape_for(n, batched);
  const std::uint32_t rows_vpt = rows_vectors_per_thread(size_of(dtype_));
  if (batched && shape.vectors_per_thread != rows_vpt) {
    throw UsageError("batched and segmented scans of " + std::string(to_string(dtype_)) +
                     " on CUDA take " + std::to_string(rows_vpt) + " rows a thread, not " +
                     std::to_string(shape.vectors_per_thread) +
                     " (the only shape they are compiled for)");
  }
  std::uint64_t tiles = tiles_for(n, batched);
  RowArgs run_rows = batched ? rows : RowArgs{};
  if (batched) {
    const std::uint64_t aligned = aligned_tiles(n, rows, shape);
    if (aligned != 0 &&
        aligned * spine_words_per_tile(dtype_) <= spine_half_words(workspace_size)) {
      run_rows =
          on_aligned_tiles(rows, tile_elements(dtype_, shape.block_size, shape.vectors_per_thread));
      tiles = aligned;
    }
  }
  const ScanArgs scan{in,
                      out,
                      n,
                      static_cast<std::uint32_t>(tiles),
                      shape.block_size,
                      shape.vectors_per_thread,
                      kind_,
                      init.bits,
                      device_init,
                      run_rows};
  auto* spines =
      reinterpret_cast<std::uint32_t*>(static_cast<std::byte*>(workspace) + kSpineOffset);
  if (!chained()) {
    reference::visit(dtype_, [&](auto tag) {
      launch_reduce_then_scan<decltype(tag)>(op_, scan, spines, stream);
    });
    return;
  }
  ChainArgs chain = chain_;
  chain.state = static_cast<ChainState*>(workspace);
  chain.spines = spines;
  chain.half_words = spine_half_words(workspace_size);
  reference::visit(dtype_,
                   [&](auto tag) { launch_chained_scan<decltype(tag)>(op_, scan, chain, stream); });
}

void* OwnedWorkspace::reserve(const ScanLauncher& launcher, std::uint64_t n, cudaStream_t stream) {
  return reserve(launcher.workspace_bytes(n), stream);
}

void* OwnedWorkspace::reserve(std::size_t bytes, cudaStream_t stream) {
  if (bytes > memory_.size()) {
    // A new workspace starts clean (turn 0, both halves zero).
    check(cudaStreamSynchronize(stream), "finishing the runs on the old workspace");
    memory_ = DeviceMemory(bytes);
    check(cudaMemsetAsync(memory_.data(), 0, bytes, stream), "clearing the workspace");
  }
  return memory_.data();
}

}  // namespace gpuscan::cuda
