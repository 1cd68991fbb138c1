// The compaction kernels' launcher for one element type, GS_CUDA_DTYPE (CMake compiles this
// file once per type, in parallel, apart from the scan's kernels.cu so that neither rebuilds
// the other). Per type: six operations, both tile states, with and without statistics, each
// operation at its policy's rows (compaction_policy.hpp).
#include "cuda/chained_launch.cuh"
#include "cuda/kernels/compaction.cuh"

namespace gpuscan::cuda {
namespace {

template <class F>
void with_compaction(Compaction compaction, F&& f) {
  switch (compaction) {
    case Compaction::select_flagged:
      return f(std::integral_constant<Compaction, Compaction::select_flagged>{});
    case Compaction::unique:
      return f(std::integral_constant<Compaction, Compaction::unique>{});
    case Compaction::partition:
      return f(std::integral_constant<Compaction, Compaction::partition>{});
    case Compaction::partition_flagged:
      return f(std::integral_constant<Compaction, Compaction::partition_flagged>{});
    case Compaction::run_length_encode:
      return f(std::integral_constant<Compaction, Compaction::run_length_encode>{});
    default:
      return f(std::integral_constant<Compaction, Compaction::select_if>{});
  }
}

template <class T, Compaction kOp, class S, int kRows>
void launch_with(const CompactArgs& a, ChainArgs chain, cudaStream_t stream) {
  const auto kernel = chain.statistics ? compact_tiles<T, kOp, S, true, kRows>
                                       : compact_tiles<T, kOp, S, false, kRows>;
  const std::size_t stage_bytes = compact_stage_bytes<T>(kOp, a.block_size, kRows);
  // resident_blocks' first query for a kernel also allows it the staging space.
  const bool one_round = a.tile_count <= resident_blocks(kernel, a.block_size, stage_bytes);
  ScanArgs sizes;
  sizes.tile_count = a.tile_count;
  chain.lookback_depth = lookback_depth_for<ChainMonoid<kOp>, S>(sizes, chain, one_round);
  kernel<<<a.tile_count, a.block_size, stage_bytes, stream>>>(a, chain);
}

template <class T, Compaction kOp, int kRows>
void launch_with_rows(const CompactArgs& a, ChainArgs chain, cudaStream_t stream) {
  if (chain.packed) {
    launch_with<T, kOp, PackedState<std::uint64_t>, kRows>(a, chain, stream);
  } else {
    launch_with<T, kOp, SplitState<std::uint64_t>, kRows>(a, chain, stream);
  }
}

}  // namespace

template <class T>
void launch_compaction(const CompactArgs& a, ChainArgs chain, cudaStream_t stream) {
  with_compaction(a.compaction, [&](auto op) {
    launch_with_rows<T, op(), compaction_policy(op()).rows>(a, chain, stream);
  });
  check(cudaGetLastError(), "launching the compaction");
}

template void launch_compaction<Element>(const CompactArgs&, ChainArgs, cudaStream_t);

}  // namespace gpuscan::cuda
