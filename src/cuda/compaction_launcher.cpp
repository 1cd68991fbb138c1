#include "cuda/compaction_launcher.hpp"

#include <string>

#include "core/reference.hpp"
#include "cuda/compaction_policy.hpp"
#include "cuda/scan_launcher.hpp"

namespace gpuscan::cuda {

CompactionLauncher::CompactionLauncher(const CompactSpec& spec, const detail::ScanPolicy& policy,
                                       const testing::Options& options)
    : spec_(spec), chain_(chain_for(spec.algorithm, options, policy)) {
  check_cuda_options(options);
  if (options.wide_row_counts) {
    throw UsageError(
        "CUDA compaction packs its rows' counts 8 bits a row (32 lanes); the 16-bit form is a "
        "Vulkan option");
  }
  if (options.int16_positions.has_value()) {
    throw UsageError(
        "CUDA compaction stages its kept values, not positions; the staged "
        "positions' form is a Vulkan option");
  }
  const CompactionPolicy tile = compaction_policy(spec.compaction);
  // Each operation's kernels are compiled for its policy's rows only (compaction_policy.hpp).
  const int rows = options.vectors_per_thread;
  if (rows != 0 && rows != tile.rows) {
    throw UsageError("the CUDA " + std::string(to_string(spec.compaction)) + " kernels take " +
                     std::to_string(tile.rows) + " vectors (16 bytes each) per thread, not " +
                     std::to_string(rows));
  }
  rows_ = static_cast<std::uint32_t>(tile.rows);
  block_size_ = options.workgroup_size != 0 ? options.workgroup_size
                : size_of(spec.dtype) == 8  ? tile.wide_block_size
                                            : tile.block_size;
  if (options.tile_state == testing::TileState::automatic) chain_.packed = tile.packed;
  if (block_size_ % 32 != 0 || block_size_ < 64 || block_size_ > kCompactBlockLimit) {
    throw UsageError("CUDA compaction blocks must be a multiple of 32 in [64, " +
                     std::to_string(kCompactBlockLimit) + "], not " + std::to_string(block_size_));
  }
}

std::uint32_t CompactionLauncher::tile_elements() const {
  return cuda::tile_elements(spec_.dtype, block_size_, rows_);
}

std::uint64_t CompactionLauncher::tiles_for(std::uint64_t n) const {
  return (n + tile_elements() - 1) / tile_elements();
}

std::size_t CompactionLauncher::max_elements() const {
  return (std::size_t{1} << 32) - 2 * std::size_t{tile_elements()};
}

std::size_t CompactionLauncher::workspace_bytes(std::uint64_t max_n) const {
  constexpr std::uint64_t granule = kSpineOffset / 4;
  const std::uint64_t words = tiles_for(std::max<std::uint64_t>(max_n, 1)) * kCompactSpineWords;
  return kSpineOffset + 2 * ((words + granule - 1) / granule * granule) * 4;
}

void CompactionLauncher::launch(CompactArgs args, void* workspace, std::size_t workspace_size,
                                cudaStream_t stream, const CompactionKernel* kernel) const {
  if (workspace_size < workspace_bytes(args.n)) {
    throw UsageError("a compaction workspace of " + std::to_string(workspace_size) +
                     " bytes is too small for " + std::to_string(args.n) + " elements");
  }
  args.compaction = spec_.compaction;
  args.predicate = spec_.predicate;
  args.flag_bytes = static_cast<std::uint32_t>(size_of(spec_.flags_dtype));
  args.tile_count = static_cast<std::uint32_t>(tiles_for(args.n));
  args.block_size = block_size_;
  args.rows = rows_;
  ChainArgs chain = chain_;
  chain.state = static_cast<ChainState*>(workspace);
  chain.spines =
      reinterpret_cast<std::uint32_t*>(static_cast<std::byte*>(workspace) + kSpineOffset);
  // As ScanLauncher::launch: the halves' place follows from the workspace's size alone.
  constexpr std::uint64_t granule = kSpineOffset / 4;
  chain.half_words = (workspace_size - kSpineOffset) / 8 / granule * granule;
  if (kernel) return (*kernel)(args, chain, stream);
  reference::visit(spec_.dtype,
                   [&](auto tag) { launch_compaction<decltype(tag)>(args, chain, stream); });
}

}  // namespace gpuscan::cuda
