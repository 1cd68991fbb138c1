#include "vulkan/timed_run.hpp"

#include <span>
#include <string>

#include "gpuscan/error.hpp"
#include "vulkan/scan_kernels.hpp"

namespace gpuscan::vulkan {

RunResult timed_run(const std::shared_ptr<const Context>& context, const Timestamps& timestamps,
                    const VulkanBuffer& control, bool may_give_up, bool counts_statistics,
                    const std::function<void(VkCommandBuffer)>& record) {
  context->submit([&](VkCommandBuffer cmd) {
    timestamps.reset(cmd);
    timestamps.begin(cmd, 0);
    record(cmd);
    timestamps.end(cmd, 0);
  });
  RunResult result{timestamps.milliseconds().front(), std::nullopt};
  if (!may_give_up && !counts_statistics) return result;
  RunCounts counts{};
  download(context, control, std::as_writable_bytes(std::span(&counts, 1)), RunCounts::offset);
  if (counts.abandoned != 0) {
    throw ForwardProgressError(
        "csdl on " + context->info().name + ": " + std::to_string(counts.abandoned) +
        " look-backs gave up waiting for a predecessor that made no progress "
        "(the device does not guarantee forward progress); use csdldf");
  }
  if (counts_statistics) result.statistics = counts.statistics();
  return result;
}

}  // namespace gpuscan::vulkan
