#include "vulkan/pipeline_cache.hpp"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "shaders/common/interface.h"
#include "vulkan/check.hpp"
#include "vulkan/push_constants.hpp"
#include "vulkan/spirv_registry.hpp"

namespace gpuscan::vulkan {

PipelineCache::PipelineCache(std::shared_ptr<const Context> context, bool push_descriptors)
    : context_(std::move(context)), push_descriptors_(push_descriptors) {
  std::vector<VkDescriptorSetLayoutBinding> bindings(GS_BINDING_COUNT);
  for (std::uint32_t i = 0; i < GS_BINDING_COUNT; ++i) {
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  }
  VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set_info.bindingCount = GS_BINDING_COUNT;
  set_info.pBindings = bindings.data();
  if (push_descriptors) set_info.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  check(context_->vk().vkCreateDescriptorSetLayout(context_->device(), &set_info, nullptr,
                                                   &set_layout_),
        "vkCreateDescriptorSetLayout");

  const VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants)};
  VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.setLayoutCount = 1;
  layout_info.pSetLayouts = &set_layout_;
  layout_info.pushConstantRangeCount = 1;
  layout_info.pPushConstantRanges = &range;
  check(context_->vk().vkCreatePipelineLayout(context_->device(), &layout_info, nullptr, &layout_),
        "vkCreatePipelineLayout");
}

PipelineCache::~PipelineCache() {
  for (auto& [key, pipeline] : pipelines_)
    context_->vk().vkDestroyPipeline(context_->device(), pipeline, nullptr);
  context_->vk().vkDestroyPipelineLayout(context_->device(), layout_, nullptr);
  context_->vk().vkDestroyDescriptorSetLayout(context_->device(), set_layout_, nullptr);
}

VkPipeline PipelineCache::get(const std::string& shader, const SpecConstants& constants) {
  const std::lock_guard lock(mutex_);
  const auto key = std::make_pair(shader, constants);
  if (auto found = pipelines_.find(key); found != pipelines_.end()) return found->second;

  const auto spirv = find_spirv(shader);
  if (spirv.empty()) throw DeviceError("no embedded shader named " + shader);
  VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  module_info.codeSize = spirv.size_bytes();
  module_info.pCode = spirv.data();
  VkShaderModule module = VK_NULL_HANDLE;
  check(context_->vk().vkCreateShaderModule(context_->device(), &module_info, nullptr, &module),
        "vkCreateShaderModule");

  std::array<VkSpecializationMapEntry, std::tuple_size_v<SpecConstants>> entries{};
  for (std::uint32_t i = 0; i < entries.size(); ++i) {
    entries[i] = {i, static_cast<std::uint32_t>(i * sizeof(std::uint32_t)), sizeof(std::uint32_t)};
  }
  VkSpecializationInfo specialization{static_cast<std::uint32_t>(entries.size()), entries.data(),
                                      sizeof(constants), constants.data()};

  // Pin the subgroup size the scan network is specialised for, with full subgroups.
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo subgroup{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  subgroup.requiredSubgroupSize = context_->subgroup_size();
  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module;
  info.stage.pName = "main";
  info.stage.pSpecializationInfo = &specialization;
  if (context_->can_require_subgroup_size()) {
    info.stage.pNext = &subgroup;
    info.stage.flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  }
  info.layout = layout_;
  const bool report =
      context_->has_pipeline_statistics() && std::getenv("GPUSCAN_PIPELINE_STATISTICS") != nullptr;
  if (report) info.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  VkPipeline pipeline = VK_NULL_HANDLE;
  const VkResult result = context_->vk().vkCreateComputePipelines(
      context_->device(), VK_NULL_HANDLE, 1, &info, nullptr, &pipeline);
  context_->vk().vkDestroyShaderModule(context_->device(), module, nullptr);
  check(result, "vkCreateComputePipelines");
  pipelines_.emplace(key, pipeline);
  if (report) print_statistics(shader, constants, pipeline);
  return pipeline;
}

// Developer diagnostics (GPUSCAN_PIPELINE_STATISTICS=1, README "Usage"): the driver's
// compiler report of each new pipeline on stderr, one line: the shader, its specialization
// constants in GS_SPEC_* order, then each statistic (NVIDIA: registers, binary size, stack,
// local memory, shared memory). Needs VK_KHR_pipeline_executable_properties (gpuscan's own
// device enables it where the driver has it); silent elsewhere.
void PipelineCache::print_statistics(const std::string& shader, const SpecConstants& constants,
                                     VkPipeline pipeline) const {
  auto get_statistics = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
      vkGetDeviceProcAddr(context_->device(), "vkGetPipelineExecutableStatisticsKHR"));
  if (get_statistics == nullptr) return;
  VkPipelineExecutableInfoKHR executable{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
  executable.pipeline = pipeline;
  std::uint32_t count = 0;
  if (get_statistics(context_->device(), &executable, &count, nullptr) != VK_SUCCESS) return;
  std::vector<VkPipelineExecutableStatisticKHR> statistics(
      count, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
  if (get_statistics(context_->device(), &executable, &count, statistics.data()) != VK_SUCCESS)
    return;
  std::ostringstream line;
  line << "pipeline " << shader << " spec";
  for (std::uint32_t c : constants) line << " " << c;
  line << ":";
  for (const auto& s : statistics) {
    line << " " << s.name << "=";
    switch (s.format) {
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
        line << (s.value.b32 ? "true" : "false");
        break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
        line << s.value.i64;
        break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
        // NVIDIA's 580 driver reports local memory as 2^36 plus the bytes: the low 32 bits
        // are kept (no statistic here comes near 2^32; web/tools/driver-stats.c does the same).
        line << (s.value.u64 & 0xFFFFFFFFull);
        break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR:
        line << s.value.f64;
        break;
      default:
        break;
    }
  }
  std::fprintf(stderr, "%s\n", line.str().c_str());
}

}  // namespace gpuscan::vulkan
