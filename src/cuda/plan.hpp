// The library's side of gpuscan/cuda.hpp: one-call scans on a given device, with the
// workspaces the library keeps per device, scan type and stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>

#include "gpuscan/cuda.hpp"

namespace gpuscan::cuda::internal {

// How a one-call scan's n elements divide: `rows` rows of n / rows (1: one scan), or where
// `segmented`, `segments` CSR segments at d_offsets (int64 device offsets, segments + 1).
struct RunLayout {
  std::uint64_t rows = 1;
  bool segmented = false;
  const std::int64_t* d_offsets = nullptr;
  std::uint64_t segments = 0;
};

// gpuscan::cuda::scan on device `ordinal`, whatever the calling thread's current device
// (which it leaves as it was).
void scan_on_device(int ordinal, const ScanSpec& spec, const void* d_in, void* d_out,
                    std::uint64_t n, cudaStream_t stream, std::optional<Value> init,
                    const RunLayout& layout = {});

}  // namespace gpuscan::cuda::internal
