// The library's side of gpuscan/cuda.hpp: one-call scans on a given device, with the
// workspaces the library keeps per device, scan type and stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>

#include "gpuscan/cuda.hpp"

namespace gpuscan::cuda::internal {

// gpuscan::cuda::scan on device `ordinal`, whatever the calling thread's current device
// (which it leaves as it was). rows != 1: a batched scan of n / rows elements a row.
void scan_on_device(int ordinal, const ScanSpec& spec, const void* d_in, void* d_out,
                    std::uint64_t n, cudaStream_t stream, std::optional<Value> init,
                    std::uint64_t rows = 1);

}  // namespace gpuscan::cuda::internal
