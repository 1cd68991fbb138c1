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

// The buffers of one run. `flags`: select-flagged's and partition-flagged's flags, else null;
// `second`: partition's rejected output, run-length encoding's lengths, else null. `carry`:
// what a chunk hands the next (2 * GS_CARRY_WORDS words, compaction_interface.h). A chunk of
// a longer input sees its input and flags from element `in_offset` on: a binding offset,
// which a whole number of tiles meets; the outputs are bound whole (as much of them as one
// binding takes), and a wide chunk addresses them through their device addresses.
struct CompactionBuffers {
  const VulkanBuffer& in;
  const VulkanBuffer& out;
  const VulkanBuffer* flags;
  const VulkanBuffer* second;
  const VulkanBuffer& count;
  SpineBuffer& spine;
  const VulkanBuffer& control;
  const VulkanBuffer& carry;
  std::size_t in_offset = 0;
};

// Where a run lies among the chunks of one compaction: its number (0: the first, no carry to
// read), its first element, whether another chunk follows (its last tile then writes the
// carry), and whether its outputs may lie beyond what one binding of them holds
// (CompactionKernels::binding_holds): then the wide pipeline writes them through buffer
// device addresses (docs/protocol.md, "Compaction in chunks").
struct CompactionChunk {
  std::uint32_t index = 0;
  std::size_t first = 0;
  bool more = false;
  bool wide = false;
};

// One descriptor set over a CompactionBuffers (bindings of
// shaders/common/compaction_interface.h), in a pool of its own.
class CompactionBindingSet : public BindingSet {
 public:
  // `element`, `flag_bytes`: bytes of an input element and of a flag, for the offsets.
  CompactionBindingSet(std::shared_ptr<const Context> context, VkDescriptorSetLayout layout,
                       const CompactionBuffers& buffers, std::size_t element,
                       std::size_t flag_bytes);
};

class CompactionKernels {
 public:
  CompactionKernels(std::shared_ptr<const Context> context,
                    std::shared_ptr<PipelineCache> pipelines, const CompactSpec& spec,
                    const testing::Options& options);

  // The most elements one run (chunk) may take on this device, and one compaction: any n
  // where the device has buffer device addresses (the wide pipeline writes the outputs past
  // one binding), else what one binding of the outputs holds.
  std::size_t max_elements() const;
  std::size_t max_total_elements() const;
  // Whether a chunk of `n` elements from element `first` on writes only within what one
  // binding of each output holds (all its positions lie below first + n): the one-binding
  // pipeline runs it; else the wide one (testing::Options::output_binding_elements shrinks
  // the binding for tests).
  bool binding_holds(std::size_t first, std::size_t n) const;
  // Whether the wide pipeline may run: the device has buffer device addresses (unless
  // testing::Options::wide_outputs says no).
  bool writes_wide() const { return wide_; }
  // Bytes of one spine half that a run on n elements uses (in place: with the claim words).
  std::size_t spine_bytes(std::size_t n, bool in_place = false) const;
  // Records one run on n >= 1 elements, chunk `chunk` of a compaction: the first zeroes the
  // count, and each the control words where the kernel uses them (a later chunk only the
  // tile counter, so that statistics add up), after a barrier on the chunk before; takes the
  // spine's next half, dispatches. Inputs must be visible to compute; the outputs are
  // written by compute. `in_place`: buffers.out is buffers.in, and the in-place kernel runs
  // (docs/protocol.md, "In-place compaction"; one chunk only, never wide). A wide chunk
  // (chunk.wide) first writes the outputs' device addresses to the carry buffer
  // (compaction_interface.h, GS_COMPACT_OUTPUT_ADDRESS).
  void record(VkCommandBuffer cmd, const CompactionBuffers& buffers, VkDescriptorSet set,
              std::size_t n, Value constant, bool in_place = false,
              const CompactionChunk& chunk = {}) const;
  // The tiles out of place, and in place (a shape of its own: it stages values).
  const TileShape& shape() const { return shape_; }
  const TileShape& tile_shape(bool in_place) const { return in_place ? in_place_shape_ : shape_; }
  bool counts_statistics() const { return statistics_; }

 private:
  std::shared_ptr<const Context> context_;
  std::shared_ptr<PipelineCache> pipelines_;
  TileShape shape_;
  TileShape in_place_shape_;
  std::uint32_t blocking_mask_;
  std::string shader_;
  std::string wide_shader_;  // the outputs through buffer device addresses
  SpecConstants spec_{};
  SpecConstants in_place_spec_{};  // spec_ for the in-place kernel, a pipeline of its own
  std::size_t spine_word_bytes_ = sizeof(std::uint32_t);  // 8 for the packed tile state
  // Bytes an element takes in the largest input binding (the input, or select-flagged's
  // flags) and the largest output binding (the outputs, or run-length encoding's lengths).
  std::size_t input_element_bytes_ = 0;
  std::size_t output_element_bytes_ = 0;
  // Output elements one binding of the outputs holds (the widest output's), below 2^32.
  std::size_t binding_output_elements_ = 0;
  bool wide_ = false;  // chunks past the binding may run the wide pipeline
  bool resets_control_ = false;
  bool statistics_ = false;
};

}  // namespace gpuscan::vulkan
