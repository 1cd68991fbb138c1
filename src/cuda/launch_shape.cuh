// What the launch of every chained kernel asks (the scans' in chained_launch.cuh, the
// compaction family's in compaction_kernel_launch.cuh): how many blocks the device holds at
// once, and how many look-back windows a step reads.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/check.hpp"
#include "cuda/kernels/look_back.cuh"
#include "cuda/launch.hpp"

namespace gpuscan::cuda {

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

}  // namespace gpuscan::cuda
