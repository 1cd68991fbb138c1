#include "vulkan/timestamps.hpp"

#include "vulkan/check.hpp"

namespace gpuscan::vulkan {

Timestamps::Timestamps(std::shared_ptr<const Context> context, std::uint32_t pairs)
    : context_(std::move(context)), pairs_(pairs) {
  VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  info.queryCount = 2 * pairs_;
  check(context_->vk().vkCreateQueryPool(context_->device(), &info, nullptr, &pool_),
        "vkCreateQueryPool");
}

Timestamps::~Timestamps() {
  context_->vk().vkDestroyQueryPool(context_->device(), pool_, nullptr);
}

void Timestamps::reset(VkCommandBuffer cmd) const {
  context_->vk().vkCmdResetQueryPool(cmd, pool_, 0, 2 * pairs_);
}

void Timestamps::begin(VkCommandBuffer cmd, std::uint32_t pair) const {
  context_->vk().vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, pool_, 2 * pair);
}

void Timestamps::end(VkCommandBuffer cmd, std::uint32_t pair) const {
  context_->vk().vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, pool_,
                                      2 * pair + 1);
}

std::vector<double> Timestamps::milliseconds() const {
  std::vector<std::uint64_t> ticks(2 * pairs_);
  check(context_->vk().vkGetQueryPoolResults(
            context_->device(), pool_, 0, 2 * pairs_, ticks.size() * sizeof(std::uint64_t),
            ticks.data(), sizeof(std::uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
  const double ns_per_tick = context_->limits().timestampPeriod;
  std::vector<double> ms(pairs_);
  for (std::uint32_t i = 0; i < pairs_; ++i) {
    ms[i] = static_cast<double>(ticks[2 * i + 1] - ticks[2 * i]) * ns_per_tick * 1e-6;
  }
  return ms;
}

}  // namespace gpuscan::vulkan
