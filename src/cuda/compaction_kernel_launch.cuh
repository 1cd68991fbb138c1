// The launch of one compaction kernel (DESIGN 3e) for an element type, an operation and a
// predicate: compaction_kernels.cu instantiates it with the built-in predicates, and
// gpuscan/cuda_compaction.cuh in the caller's translation unit with the caller's device
// functor. The tile is the operation's policy row (compaction_policy.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "cuda/check.hpp"
#include "cuda/compaction_launch.hpp"
#include "cuda/compaction_policy.hpp"
#include "cuda/kernels/compaction.cuh"
#include "cuda/launch_shape.cuh"
#include "gpuscan/error.hpp"

namespace gpuscan::cuda {

// Launches `kernel`, one of compaction.cuh's (or in_place.cuh's) for T, kOp and tile state S:
// a block a tile, or with kPersistent as many blocks as the device holds at once, each
// taking tile after tile (compact_tiles).
template <class T, Compaction kOp, class S, int kRows, bool kPersistent, class Kernel, class Pred>
void launch_tiles(Kernel kernel, const CompactArgs& a, ChainArgs chain, cudaStream_t stream,
                  const Pred& pred) {
  const std::size_t stage_bytes = compact_stage_bytes<T>(kOp, a.block_size, kRows);
  // resident_blocks' first query for a kernel also allows it the staging space.
  const std::uint32_t resident = resident_blocks(kernel, a.block_size, stage_bytes);
  const bool one_round = a.tile_count <= resident;
  ScanArgs sizes;
  sizes.tile_count = a.tile_count;
  chain.lookback_depth = lookback_depth_for<ChainMonoid<kOp>, S>(sizes, chain, one_round);
  const std::uint32_t blocks = kPersistent ? std::min(a.tile_count, resident) : a.tile_count;
  CompactArgs args = a;
  args.prefetch_distance = resident * compaction_policy(kOp).prefetch_eighths / 8;
  kernel<<<blocks, a.block_size, stage_bytes, stream>>>(args, chain, pred);
  check(cudaGetLastError(), "launching the compaction");
}

template <class T, Compaction kOp, class S, bool kStats, int kRows, class Pred>
void launch_compaction_tiles(const CompactArgs& a, ChainArgs chain, cudaStream_t stream,
                             const Pred& pred) {
  launch_tiles<T, kOp, S, kRows, compaction_policy(kOp).persistent>(
      compact_tiles<T, kOp, S, kStats, kRows, Pred>, a, chain, stream, pred);
}

// Launches operation kOp (a.compaction) on a.n >= 1 elements of T on the tile chain `chain`,
// in the tile state `chain` names, with or without statistics: the library's kernels, every
// variant the tests and benchmarks pick.
template <class T, Compaction kOp, class Pred>
void launch_compaction_kernel(const CompactArgs& a, ChainArgs chain, cudaStream_t stream,
                              const Pred& pred) {
  constexpr int kRows = compaction_policy(kOp).rows;
  const auto with_state = [&](auto state) {
    using S = decltype(state);
    if (chain.statistics) {
      launch_compaction_tiles<T, kOp, S, true, kRows>(a, chain, stream, pred);
    } else {
      launch_compaction_tiles<T, kOp, S, false, kRows>(a, chain, stream, pred);
    }
  };
  using V = typename ChainMonoid<kOp>::T;
  if (chain.packed) {
    with_state(PackedState<V>{});
  } else {
    with_state(SplitState<V>{});
  }
}

// The same for the one variant a plan runs (the policy's tile state, no statistics): what a
// caller's functor is compiled for (gpuscan/cuda_compaction.cuh), a quarter of the kernels.
template <class T, Compaction kOp, class Pred>
void launch_plan_kernel(const CompactArgs& a, ChainArgs chain, cudaStream_t stream,
                        const Pred& pred) {
  constexpr CompactionPolicy policy = compaction_policy(kOp);
  using V = typename ChainMonoid<kOp>::T;
  using S = std::conditional_t<policy.packed, PackedState<V>, SplitState<V>>;
  if (chain.statistics || chain.packed != policy.packed) {
    throw UsageError("a compaction with a device functor runs the plan's own variant only");
  }
  launch_compaction_tiles<T, kOp, S, false, policy.rows>(a, chain, stream, pred);
}

}  // namespace gpuscan::cuda
