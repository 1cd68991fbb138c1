#include "cuda/scan_launcher.hpp"

#include <string>

#include "core/reference.hpp"
#include "core/tuning.hpp"

namespace gpuscan::cuda {
namespace {

// Look-back steps without progress before csdl gives up: on a GPU with forward progress a
// wait never comes near this.
constexpr std::uint32_t csdl_wait_limit = 1u << 22;

std::uint32_t block_size_of(const Tuning& tuning) {
  const std::uint32_t size = tuning.workgroup_size ? tuning.workgroup_size : kDefaultBlockSize;
  if (size % 32 != 0 || size < 64 || size > 1024) {
    throw UsageError("CUDA block size " + std::to_string(size) +
                     " must be a multiple of 32 in [64, 1024]");
  }
  return size;
}

void check_shape(const TileShapeChoice& shape, bool chained, bool per_tile) {
  if (shape.block_size > max_block_size(shape.vectors_per_thread)) {
    throw UsageError("CUDA blocks of " + std::to_string(shape.vectors_per_thread) +
                     " vectors per thread have at most " +
                     std::to_string(max_block_size(shape.vectors_per_thread)) + " threads");
  }
  if (per_tile && shape.block_size > kPerTileBlockLimit) {
    throw UsageError("CUDA blocks of a tile each have at most " +
                     std::to_string(kPerTileBlockLimit) + " threads");
  }
  const std::uint32_t limit = chained_block_limit(shape.vectors_per_thread);
  if (chained && !per_tile && shape.block_size + kLookBackThreads > limit) {
    throw UsageError("CUDA chained scans add a look-back warp to each block: at most " +
                     std::to_string(limit - kLookBackThreads) + " threads scan a tile");
  }
}

void check_cuda_tuning(Implementation implementation, const Tuning& tuning, bool persistent) {
  detail::check_tuning(implementation, tuning);
  const std::uint32_t rows = tuning.vectors_per_thread;
  if (rows != 0 && rows != 4 && rows != 8 && (rows != 6 || persistent)) {
    throw UsageError(persistent
                         ? "the persistent CUDA kernel takes 4 or 8 vectors (16 bytes each) per "
                           "thread"
                         : "the CUDA kernels take 4, 6 or 8 vectors (16 bytes each) per thread");
  }
  if (tuning.subgroup_size != 0 && tuning.subgroup_size != 32) {
    throw UsageError("CUDA warps have 32 lanes; logical subgroups are a Vulkan test option");
  }
  if (tuning.lookback_depth > kMaxLookbackDepth) {
    throw UsageError("the CUDA look-back reads at most " + std::to_string(kMaxLookbackDepth) +
                     " windows per step");
  }
}

}  // namespace

ScanLauncher::ScanLauncher(DType dtype, Op op, Kind kind, Implementation implementation,
                           const Tuning& tuning, cudaStream_t stream)
    : dtype_(dtype),
      op_(op),
      kind_(kind),
      implementation_(implementation),
      controls_(2 * sizeof(RunControl)) {
  chain_.staged_tiles = tuning.staged_tiles ? tuning.staged_tiles : kPerTileBlocks;
  per_tile_ = chained() && chain_.staged_tiles == kPerTileBlocks;
  check_cuda_tuning(implementation, tuning, chained() && !per_tile_);
  shape_ = {block_size_of(tuning), tuning.vectors_per_thread
                                       ? tuning.vectors_per_thread
                                       : default_vectors_per_thread(dtype, per_tile_)};
  automatic_shape_ = chained() && tuning.workgroup_size == 0 && tuning.vectors_per_thread == 0;
  check_shape(shape_, chained(), per_tile_);
  if (automatic_shape_)
    check_shape(per_tile_ ? kSmallInputShape : kLargeInputShape, true, per_tile_);
  if (implementation == Implementation::cub && op != Op::add) {
    throw UsageError("the cub baseline runs sums only (--op add)");
  }
  chain_.fallback = implementation == Implementation::csdldf;
  chain_.max_spins = implementation == Implementation::csdl ? csdl_wait_limit : tuning.max_spins;
  if (chain_.max_spins == 0) throw UsageError("max spins must be at least 1");
  chain_.blocking_mask = tuning.blocking_mask.value_or(0xFFFFFFFFu);
  chain_.packed = tuning.tile_state != TileState::split;
  chain_.statistics = tuning.statistics;
  chain_.lookback_depth = static_cast<int>(tuning.lookback_depth);  // 0: the launch picks
  chain_.dispatch_order = tuning.dispatch_order.value_or(implementation == Implementation::csdldf);
  if ((chain_.staged_tiles < kMinStagedTiles || chain_.staged_tiles > kMaxStagedTiles) &&
      chain_.staged_tiles != kPerTileBlocks) {
    throw UsageError("staged tiles must be " + std::to_string(kPerTileBlocks) +
                     " (a block per tile) or in [" + std::to_string(kMinStagedTiles) + ", " +
                     std::to_string(kMaxStagedTiles) + "]");
  }
  check(cudaMemsetAsync(controls_.data(), 0, controls_.size(), stream), "clearing run counters");
}

bool ScanLauncher::chained() const {
  return implementation_ == Implementation::csdldf || implementation_ == Implementation::csdl;
}

std::size_t ScanLauncher::max_elements() const {
  // Tile indices are 32-bit, and a block's next tile (its last one plus the grid) must not
  // wrap around: 2^31 tiles (2^43 elements by default), far beyond any device's memory.
  return (std::size_t{1} << 31) *
         tile_elements(dtype_, shape_.block_size, shape_.vectors_per_thread);
}

TileShapeChoice ScanLauncher::shape_for(std::uint64_t n) const {
  if (!automatic_shape_) return shape_;
  const std::uint64_t bytes = n * size_of(dtype_);
  if (per_tile_) return bytes < kSmallInputBytes ? kSmallInputShape : shape_;
  return bytes >= kLargeInputBytes ? kLargeInputShape : shape_;
}

void ScanLauncher::launch(const void* in, void* out, std::uint64_t n, Value init,
                          cudaStream_t stream) {
  const TileShapeChoice shape = shape_for(n);
  const std::uint64_t per_tile = tile_elements(dtype_, shape.block_size, shape.vectors_per_thread);
  const auto tiles = static_cast<std::uint32_t>((n + per_tile - 1) / per_tile);
  const std::size_t element = size_of(dtype_);
  const ScanArgs scan{in,    out,      n, tiles, shape.block_size, shape.vectors_per_thread,
                      kind_, init.bits};
  switch (implementation_) {
    case Implementation::memcpy:
      check(cudaMemcpyAsync(out, in, n * element, cudaMemcpyDeviceToDevice, stream), "copying");
      return;
    case Implementation::cub: {
      const std::size_t bytes = cub_temp_bytes(dtype_, kind_, n);
      if (cub_temp_.size() < bytes) cub_temp_ = DeviceMemory(bytes);
      launch_cub_sum(dtype_, kind_, in, out, n, cub_temp_.data(), bytes, stream);
      return;
    }
    case Implementation::rts:
      if (rts_spine_.size() < tiles * element) rts_spine_ = DeviceMemory(tiles * element);
      reference::visit(dtype_, [&](auto tag) {
        launch_reduce_then_scan<decltype(tag)>(op_, scan, rts_spine_.data(), stream);
      });
      return;
    default:
      launch_chained(scan, stream);
  }
}

void ScanLauncher::launch_chained(const ScanArgs& scan, cudaStream_t stream) {
  const std::uint64_t words = std::uint64_t{scan.tile_count} * spine_words_per_tile(dtype_);
  if (words > spine_capacity_words_) {
    // Both spines start over, zeroed; the run counters of both are zero already (each run
    // clears the other's).
    for (DeviceMemory& spine : spines_) {
      spine = DeviceMemory(words * 4);
      check(cudaMemsetAsync(spine.data(), 0, words * 4, stream), "clearing the spine");
    }
    halves_.forget_writes();
    spine_capacity_words_ = words;
  }
  const detail::SpineHalves::Turn turn = halves_.take(words);
  ChainArgs chain = chain_;
  chain.spine = spines_[turn.half].data();
  chain.next_spine = spines_[turn.clear_half].as<std::uint32_t>();
  chain.next_spine_words = turn.clear_count;
  chain.control = controls_.as<RunControl>() + turn.half;
  chain.next_control = controls_.as<RunControl>() + turn.clear_half;
  reference::visit(dtype_,
                   [&](auto tag) { launch_chained_scan<decltype(tag)>(op_, scan, chain, stream); });
}

}  // namespace gpuscan::cuda
