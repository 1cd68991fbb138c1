// What the Vulkan benchmarks share (benchmark.cpp: the scans; compaction_benchmark.cpp: the
// compaction family): the size of the cache flush between timed runs, and the warm-up.
#pragma once

#include "vulkan/vk.hpp"

#include <cstddef>
#include <functional>

#include "gpuscan/device.hpp"
#include "vulkan/context.hpp"

namespace gpuscan::vulkan {

// Writing a buffer larger than the last-level cache between runs evicts the input, so
// each run starts cold, as a scan inside a real pipeline would.
std::size_t flush_bytes(const DeviceInfo& info);

// Untimed runs before the timed ones, each batch `record_batch` once or more times: the
// first builds the pipelines; then, on a GPU, runs go on until the device has been busy for
// a while after it (the clock ramps up within about 0.2 s of steady work). A GPU left idle
// (as it is while the host makes and uploads the input) lowers its shader clock, and the
// NVIDIA driver was seen to time whole Vulkan batches at 345 MHz instead of 1980 MHz, which
// slows the latency-bound kernels far more than memcpy. (A CUDA context keeps the clocks up.)
void warm_up(const Context& context, const std::function<void(VkCommandBuffer)>& record_batch);

}  // namespace gpuscan::vulkan
