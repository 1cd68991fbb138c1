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

void check_cuda_options(const testing::Options& options) {
  if (options.subgroup_size != 0 && options.subgroup_size != 32) {
    throw UsageError("CUDA warps have 32 lanes; logical subgroups are a Vulkan test option");
  }
  if (options.lookback_depth > kMaxLookbackDepth) {
    throw UsageError("the CUDA look-back reads at most " + std::to_string(kMaxLookbackDepth) +
                     " windows per step");
  }
}

}  // namespace

ScanLauncher::ScanLauncher(DType dtype, Op op, Kind kind, Algorithm algorithm,
                           const detail::ScanPolicy& policy, const testing::Options& options,
                           cudaStream_t stream)
    : dtype_(dtype), op_(op), kind_(kind), algorithm_(algorithm), controls_(2 * sizeof(RunControl)) {
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
  chain_.fallback = algorithm == Algorithm::csdldf;
  chain_.max_spins = algorithm == Algorithm::csdl ? csdl_wait_limit : options.tuning.max_spins;
  chain_.blocking_mask = options.blocking_mask.value_or(0xFFFFFFFFu);
  chain_.packed = options.tile_state != testing::TileState::split;
  chain_.statistics = options.statistics;
  chain_.lookback_depth = static_cast<int>(options.lookback_depth ? options.lookback_depth
                                                                  : policy.lookback_depth);
  chain_.dispatch_order =
      options.dispatch_order.value_or(algorithm == Algorithm::csdldf && policy.dispatch_order);
  check(cudaMemsetAsync(controls_.data(), 0, controls_.size(), stream), "clearing run counters");
}

std::size_t ScanLauncher::max_elements() const {
  // Tile indices are 32-bit: 2^31 tiles (2^43 elements by default), far beyond any device's
  // memory.
  return (std::size_t{1} << 31) *
         tile_elements(dtype_, shape_.block_size, shape_.vectors_per_thread);
}

TileShapeChoice ScanLauncher::shape_for(std::uint64_t n) const {
  return n * size_of(dtype_) < small_below_bytes_ ? small_shape_ : shape_;
}

void ScanLauncher::launch(const void* in, void* out, std::uint64_t n, Value init,
                          cudaStream_t stream) {
  const TileShapeChoice shape = shape_for(n);
  const std::uint64_t per_tile = tile_elements(dtype_, shape.block_size, shape.vectors_per_thread);
  const auto tiles = static_cast<std::uint32_t>((n + per_tile - 1) / per_tile);
  const ScanArgs scan{in,    out,      n, tiles, shape.block_size, shape.vectors_per_thread,
                      kind_, init.bits};
  if (!chained()) {
    const std::size_t bytes = std::size_t{tiles} * size_of(dtype_);
    if (rts_spine_.size() < bytes) rts_spine_ = DeviceMemory(bytes);
    reference::visit(dtype_, [&](auto tag) {
      launch_reduce_then_scan<decltype(tag)>(op_, scan, rts_spine_.data(), stream);
    });
    return;
  }
  launch_chained(scan, stream);
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
