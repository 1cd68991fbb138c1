// Compute pipelines built from embedded SPIR-V and specialization constants, created on
// first use and kept for the life of the device. Every pipeline shares one descriptor set
// layout (the bindings of shaders/common/interface.h) and one push-constant range. The
// layout takes descriptor sets (gpuscan's own runs) or, with `push_descriptors`, descriptors
// pushed into the command buffer (runs recorded into the application's command buffers).
#pragma once

#include "vulkan/vk.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "shaders/common/interface.h"
#include "vulkan/context.hpp"

namespace gpuscan::vulkan {

// Values of the specialization constants, indexed by GS_SPEC_*.
using SpecConstants = std::array<std::uint32_t, GS_SPEC_COUNT>;

class PipelineCache {
 public:
  explicit PipelineCache(std::shared_ptr<const Context> context, bool push_descriptors = false);
  ~PipelineCache();
  PipelineCache(const PipelineCache&) = delete;
  PipelineCache& operator=(const PipelineCache&) = delete;

  // `shader` names an embedded variant ("chained_scan.u32").
  VkPipeline get(const std::string& shader, const SpecConstants& constants);
  VkPipelineLayout layout() const { return layout_; }
  VkDescriptorSetLayout set_layout() const { return set_layout_; }
  bool push_descriptors() const { return push_descriptors_; }

 private:
  void print_statistics(const std::string& shader, const SpecConstants& constants,
                        VkPipeline pipeline) const;

  std::shared_ptr<const Context> context_;
  bool push_descriptors_ = false;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  std::mutex mutex_;
  std::map<std::pair<std::string, SpecConstants>, VkPipeline> pipelines_;
};

}  // namespace gpuscan::vulkan
