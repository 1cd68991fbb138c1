// A query pool of timestamp pairs: one pair brackets one timed run.
#pragma once

#include "vulkan/vk.hpp"

#include <cstdint>
#include <memory>
#include <vector>

#include "vulkan/context.hpp"

namespace gpuscan::vulkan {

class Timestamps {
 public:
  Timestamps(std::shared_ptr<const Context> context, std::uint32_t pairs);
  ~Timestamps();
  Timestamps(const Timestamps&) = delete;
  Timestamps& operator=(const Timestamps&) = delete;

  void reset(VkCommandBuffer cmd) const;
  // Both wait for all earlier commands, so a pair times exactly the commands between.
  void begin(VkCommandBuffer cmd, std::uint32_t pair) const;
  void end(VkCommandBuffer cmd, std::uint32_t pair) const;
  // Milliseconds of each pair, after the commands finished.
  std::vector<double> milliseconds() const;

 private:
  std::shared_ptr<const Context> context_;
  std::uint32_t pairs_;
  VkQueryPool pool_ = VK_NULL_HANDLE;
};

}  // namespace gpuscan::vulkan
