// What the Vulkan benchmarks share (benchmark.cpp: the scans; compaction_benchmark.cpp: the
// compaction family): the size of the cache flush between timed runs, and the warm-up.
#pragma once

#include "vulkan/vk.hpp"

#include <chrono>
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
// a second and a run takes as long as in the batch before (at most 3 s). A GPU left idle (as
// it is for the seconds the host takes to make, upload and check each size's data) lowers its
// shader clock: an NVIDIA H200 went down to 345 MHz and took 0.2-0.3 s of steady work to
// climb back to 1980 MHz; waiting a fixed 0.3 s, some processes timed a whole size as at a
// low clock (Vulkan memcpy 2.4x and compaction 4x slower than in the others; docs/
// performance.md, "How it is measured"). The slow clock costs the latency-bound kernels far
// more than memcpy. (A CUDA context keeps the clocks up.)
void warm_up(const Context& context, const std::function<void(VkCommandBuffer)>& record_batch);

// warm_up's rule for stopping: after `busy` of steady work, with a run taking `run_seconds` in
// the last batch and `previous_seconds` in the one before (0: no batch before), whether the
// clock is up: busy at least 1 s and the two within 2%, or busy 3 s whatever they are.
bool warmed_up(std::chrono::duration<double> busy, double run_seconds, double previous_seconds);

}  // namespace gpuscan::vulkan
