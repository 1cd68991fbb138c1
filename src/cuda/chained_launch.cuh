// What the launchers of kernels.cu and row_kernels.cu share: the element type of the
// translation unit (GS_CUDA_DTYPE: CMake compiles each once per type, in parallel), the
// dispatch from run-time choices (operator, rows per thread) to instantiations, and the
// chained scan's launch.
#pragma once

#include <algorithm>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/check.hpp"
#include "cuda/element.hpp"
#include "cuda/kernels/monoid.cuh"
#include "cuda/kernels/per_tile_scan.cuh"
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

// The blocks of `kernel` the device holds at once, asked once per kernel, device and shape
// (the queries would otherwise add microseconds to every small scan). The first call for a
// kernel also allows it all the dynamic shared memory a block may have.
template <class Kernel>
std::uint32_t resident_blocks(Kernel kernel, std::uint32_t block_size, std::size_t shared_bytes) {
  struct Entry {
    const void* kernel;
    int device;
    std::uint32_t block_size;
    std::size_t shared_bytes;
    std::uint32_t blocks;
  };
  static std::mutex mutex;
  static std::vector<Entry> known;
  int device = 0;
  check(cudaGetDevice(&device), "finding the device");
  const std::lock_guard lock(mutex);
  for (const Entry& e : known) {
    if (e.kernel == reinterpret_cast<const void*>(kernel) && e.device == device &&
        e.block_size == block_size && e.shared_bytes == shared_bytes) {
      return e.blocks;
    }
  }
  int processors = 0, per_processor = 0, optin = 0;
  check(cudaDeviceGetAttribute(&processors, cudaDevAttrMultiProcessorCount, device),
        "counting multiprocessors");
  // Allow the kernel all the dynamic shared memory a block may have, once for every shape.
  check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
        "reading the shared memory limit");
  cudaFuncAttributes attributes{};
  check(cudaFuncGetAttributes(&attributes, kernel), "reading kernel attributes");
  if (shared_bytes + attributes.sharedSizeBytes > static_cast<std::size_t>(optin)) {
    throw UsageError("the tile shape needs " + std::to_string(shared_bytes) +
                     " bytes of shared memory, more than a block may have");
  }
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             optin - static_cast<int>(attributes.sharedSizeBytes)),
        "reserving shared memory");
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_processor, kernel,
                                                      static_cast<int>(block_size), shared_bytes),
        "computing occupancy");
  const auto blocks = static_cast<std::uint32_t>(std::max(1, processors * per_processor));
  known.push_back(
      {reinterpret_cast<const void*>(kernel), device, block_size, shared_bytes, blocks});
  return blocks;
}

// Look-back windows per step where the tuning sets none (lookback_depth 0). Where every
// block is resident at once and at most kMaxLookbackDepth windows hold all the tiles, all of
// them: the blocks post at about the same time, and one round trip then reads every
// predecessor instead of one window a trip (measured 0.6 us faster at 2^18 and 0.3 us at
// 2^19 on an H100). Otherwise one: in a longer chain the tiles just before are the likely
// INCLUSIVE ones, and deeper steps measured slower (4 windows 0.1 us slower at 2^20 and
// 0.3 us at 2^21). docs/protocol.md, "Window reads".
template <class M, class S>
int lookback_depth_for(const ScanArgs& scan, const ChainArgs& chain, bool one_round) {
  if (chain.lookback_depth != 0) return chain.lookback_depth;
  const std::uint32_t windows = (scan.tile_count + Spine<M, S>::kWindow - 1) / Spine<M, S>::kWindow;
  return one_round && windows <= kMaxLookbackDepth ? static_cast<int>(std::max(windows, 1u)) : 1;
}

// kRows: the batched scan's kernels (row_kernels.cu), with kSegments the segmented scan's
// (segment_kernels.cu), the others' in kernels.cu.
// Batched and segmented kernels exist for rows_vectors_per_thread rows only (the launcher
// refuses other shapes for them).
template <class M, class S, bool kRows, bool kSegments = false>
void launch_chained_with(const ScanArgs& scan, ChainArgs chain, cudaStream_t stream) {
  const auto launch = [&](auto vpt) {
    const auto kernel = chain.statistics
                            ? per_tile_chained_scan<M, S, vpt(), true, kRows, kSegments>
                            : per_tile_chained_scan<M, S, vpt(), false, kRows, kSegments>;
    const std::size_t parking_bytes = std::size_t{scan.block_size} * vpt() * kVectorBytes;
    // resident_blocks' first query for a kernel also allows it the parking space.
    const bool one_round =
        scan.tile_count <= resident_blocks(kernel, scan.block_size, parking_bytes);
    chain.lookback_depth = lookback_depth_for<M, S>(scan, chain, one_round);
    kernel<<<scan.tile_count, scan.block_size, parking_bytes, stream>>>(scan, chain);
  };
  if constexpr (kRows) {
    launch(std::integral_constant<int, rows_vectors_per_thread(sizeof(typename M::T))>{});
  } else {
    with_vectors_per_thread(scan.vectors_per_thread, launch);
  }
}

}  // namespace

}  // namespace gpuscan::cuda
