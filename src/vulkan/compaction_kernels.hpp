// The compaction kernels (shaders/select.comp) for one CompactSpec: the pipeline, tile
// shape and workspace sizes, and the commands that run them (DESIGN 3e). The workspace is
// the scan's: a SpineBuffer whose halves take turns and the control words.
#pragma once

#include "vulkan/vk.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "gpuscan/compactor.hpp"
#include "gpuscan/testing.hpp"
#include "vulkan/buffer.hpp"
#include "vulkan/pipeline_cache.hpp"
#include "vulkan/scan_kernels.hpp"

namespace gpuscan::vulkan {

// The buffers of one run. `aux`: select-flagged's flags, partition's rejected output,
// run-length encoding's lengths, else null.
struct CompactionBuffers {
  const VulkanBuffer& in;
  const VulkanBuffer& out;
  const VulkanBuffer* aux;
  const VulkanBuffer& count;
  SpineBuffer& spine;
  const VulkanBuffer& control;
};

// One descriptor set over a CompactionBuffers (bindings of
// shaders/common/compaction_interface.h), in a pool of its own.
class CompactionBindingSet : public BindingSet {
 public:
  CompactionBindingSet(std::shared_ptr<const Context> context, VkDescriptorSetLayout layout,
                       const CompactionBuffers& buffers);
};

class CompactionKernels {
 public:
  CompactionKernels(std::shared_ptr<const Context> context,
                    std::shared_ptr<PipelineCache> pipelines, const CompactSpec& spec,
                    const testing::Options& options);

  // The most elements one run may take on this device.
  std::size_t max_elements() const;
  // Bytes of one spine half that a run on n elements uses (in place: with the claim words).
  std::size_t spine_bytes(std::size_t n, bool in_place) const;
  // Records one run on n >= 1 elements: zeroes the count (and the control words where the
  // kernel uses them), takes the spine's next half, dispatches. Inputs must be visible to
  // compute; the outputs are written by compute. `in_place`: buffers.out is buffers.in, and
  // the in-place kernel runs (docs/protocol.md, "In-place compaction").
  void record(VkCommandBuffer cmd, const CompactionBuffers& buffers, VkDescriptorSet set,
              std::size_t n, Value constant, bool in_place) const;
  const TileShape& shape() const { return shape_; }
  bool counts_statistics() const { return statistics_; }

 private:
  std::shared_ptr<const Context> context_;
  std::shared_ptr<PipelineCache> pipelines_;
  TileShape shape_;
  std::uint32_t blocking_mask_;
  std::string shader_;
  SpecConstants spec_{};
  SpecConstants in_place_spec_{};  // spec_ for the in-place kernel, a pipeline of its own
  std::size_t spine_word_bytes_ = sizeof(std::uint32_t);  // 8 for the packed tile state
  bool resets_control_ = false;
  bool statistics_ = false;
};

}  // namespace gpuscan::vulkan
