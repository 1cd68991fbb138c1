// What the launchers of kernels.cu and row_kernels.cu share: the element type of the
// translation unit (GS_CUDA_DTYPE: CMake compiles each once per type, in parallel), the
// dispatch from run-time choices (operator, rows per thread) to instantiations, and the
// chained scan's launch.
#pragma once

#include <type_traits>

#include "cuda/check.hpp"
#include "cuda/element.hpp"
#include "cuda/kernels/monoid.cuh"
#include "cuda/kernels/per_tile_scan.cuh"
#include "cuda/launch_shape.cuh"
#include "shaders/common/interface.h"

namespace gpuscan::cuda {

namespace {

// Calls f with the Monoid of `op` for T (bitwise operators exist for integers only; the
// library refuses them for floats before any launch).
template <class T, class F>
void with_monoid(Op op, F&& f) {
  switch (op) {
    case Op::mul:
      return f(Monoid<T, Op::mul>{});
    case Op::min:
      return f(Monoid<T, Op::min>{});
    case Op::max:
      return f(Monoid<T, Op::max>{});
    default:
      break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case Op::bit_and:
        return f(Monoid<T, Op::bit_and>{});
      case Op::bit_or:
        return f(Monoid<T, Op::bit_or>{});
      case Op::bit_xor:
        return f(Monoid<T, Op::bit_xor>{});
      default:
        break;
    }
  }
  return f(Monoid<T, Op::add>{});
}

// Calls f with the rows per thread the kernels are compiled for: 4, 6 or 8.
template <class F>
void with_vectors_per_thread(std::uint32_t vectors_per_thread, F&& f) {
  if (vectors_per_thread == 6) return f(std::integral_constant<int, 6>{});
  if (vectors_per_thread == 8) return f(std::integral_constant<int, 8>{});
  f(std::integral_constant<int, 4>{});
}

// kRows: the batched scan's kernels (row_kernels.cu), with kSegments the segmented scan's
// (segment_kernels.cu); kAligned: the batched scan's on row-aligned tiles
// (aligned_row_kernels.cu); the others' in kernels.cu.
// Batched and segmented kernels exist for rows_vectors_per_thread rows only (the launcher
// refuses other shapes for them).
template <class M, class S, bool kRows, bool kSegments = false, bool kAligned = false>
void launch_chained_with(const ScanArgs& scan, ChainArgs chain, cudaStream_t stream) {
  const auto launch = [&](auto vpt) {
    const auto kernel = chain.statistics
                            ? per_tile_chained_scan<M, S, vpt(), true, kRows, kSegments, kAligned>
                            : per_tile_chained_scan<M, S, vpt(), false, kRows, kSegments, kAligned>;
    const std::size_t parking_bytes = std::size_t{scan.block_size} * vpt() * kVectorBytes;
    // resident_blocks' first query for a kernel also allows it the parking space.
    const bool one_round =
        scan.tile_count <= resident_blocks(kernel, scan.block_size, parking_bytes);
    chain.lookback_depth = lookback_depth_for<M, S>(scan, chain, one_round);
    kernel<<<scan.tile_count, scan.block_size, parking_bytes, stream>>>(scan, chain);
  };
  if constexpr (kRows || kAligned) {
    launch(std::integral_constant<int, rows_vectors_per_thread(sizeof(typename M::T))>{});
  } else {
    with_vectors_per_thread(scan.vectors_per_thread, launch);
  }
}

// The chained kernels of T for `op` in the run's tile state (chain.packed): what each
// translation unit's launcher calls with its kind of kernel.
template <class T, bool kRows, bool kSegments = false, bool kAligned = false>
void launch_chained_kernels(Op op, const ScanArgs& scan, const ChainArgs& chain,
                            cudaStream_t stream) {
  with_monoid<T>(op, [&](auto monoid) {
    using M = decltype(monoid);
    if (chain.packed) {
      launch_chained_with<M, PackedState<T>, kRows, kSegments, kAligned>(scan, chain, stream);
    } else {
      launch_chained_with<M, SplitState<T>, kRows, kSegments, kAligned>(scan, chain, stream);
    }
  });
}

}  // namespace

}  // namespace gpuscan::cuda
