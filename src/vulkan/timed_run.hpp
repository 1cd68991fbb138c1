// One run of a VulkanScanner or a VulkanCompactor: recorded between a pair of timestamps,
// submitted and waited for, then what the kernel reported in its control words (RunCounts).
#pragma once

#include "vulkan/vk.hpp"

#include <functional>
#include <memory>

#include "gpuscan/scanner.hpp"
#include "vulkan/buffer.hpp"
#include "vulkan/timestamps.hpp"

namespace gpuscan::vulkan {

// Runs `record` between `timestamps`' pair 0 and returns its device time. Where the kernel
// reports (`may_give_up`: csdl, whose look-backs give up without forward progress;
// `counts_statistics`: the statistics variant), reads `control` after the run: a look-back
// that gave up is a ForwardProgressError, and the statistics go into the result.
RunResult timed_run(const std::shared_ptr<const Context>& context, const Timestamps& timestamps,
                    const VulkanBuffer& control, bool may_give_up, bool counts_statistics,
                    const std::function<void(VkCommandBuffer)>& record);

}  // namespace gpuscan::vulkan
