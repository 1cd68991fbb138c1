#include "vulkan/compaction_kernels.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>

#include "core/options.hpp"
#include "gpuscan/error.hpp"
#include "shaders/common/compaction_interface.h"
#include "vulkan/policy.hpp"

namespace gpuscan::vulkan {
namespace {

std::uint32_t ceil_div(std::size_t a, std::size_t b) {
  return static_cast<std::uint32_t>((a + b - 1) / b);
}

std::uint32_t operation_code(Compaction compaction) {
  switch (compaction) {
    case Compaction::select_if:
      return GS_COMPACT_SELECT_IF;
    case Compaction::select_flagged:
      return GS_COMPACT_SELECT_FLAGGED;
    case Compaction::unique:
      return GS_COMPACT_UNIQUE;
    case Compaction::partition:
      return GS_COMPACT_PARTITION;
    case Compaction::run_length_encode:
      return GS_COMPACT_RLE;
    case Compaction::partition_flagged:
      return GS_COMPACT_PARTITION_FLAGGED;
  }
  return GS_COMPACT_SELECT_IF;
}

std::uint32_t predicate_code(Predicate predicate) {
  switch (predicate) {
    case Predicate::lt:
      return GS_PREDICATE_LT;
    case Predicate::le:
      return GS_PREDICATE_LE;
    case Predicate::gt:
      return GS_PREDICATE_GT;
    case Predicate::ge:
      return GS_PREDICATE_GE;
    case Predicate::eq:
      return GS_PREDICATE_EQ;
    case Predicate::ne:
      return GS_PREDICATE_NE;
  }
  return GS_PREDICATE_LT;
}

// A tile's count is 64 bits (run-length encoding's: a 32-bit count and a 32-bit position):
// four 16-bit pieces in the split tile state, two 64-bit words in the packed one; 16 bytes a
// tile either way.
constexpr std::size_t spine_bytes_per_tile = 16;

}  // namespace

namespace {

// Every binding of the layout gets a buffer; without flags or a second output, bindings 1 and
// 3 see the input (the kernel then neither reads nor writes them).
BindingSet::Buffers compaction_bindings(const CompactionBuffers& buffers) {
  BindingSet::Buffers bound{};
  bound[GS_COMPACT_BINDING_INPUT_VECTORS] = &buffers.in;
  bound[GS_COMPACT_BINDING_FLAGS] = buffers.flags ? buffers.flags : &buffers.in;
  bound[GS_COMPACT_BINDING_OUTPUT] = &buffers.out;
  bound[GS_COMPACT_BINDING_AUX] = buffers.second ? buffers.second : &buffers.in;
  bound[GS_BINDING_SPINE_WORDS] = &buffers.spine.buffer();
  bound[GS_COMPACT_BINDING_COUNT] = &buffers.count;
  bound[GS_BINDING_CONTROL] = &buffers.control;
  bound[GS_COMPACT_BINDING_CARRY] = &buffers.carry;
  return bound;
}

// The scan's policy row with the compaction kernels' own tile shape where it has one
// (policy.cpp: smaller tiles than the scan's run compaction faster); the options may still
// fix either part of the shape (choose_shape).
detail::ScanPolicy compaction_policy(const DeviceInfo& device, const CompactSpec& spec,
                                     bool in_place) {
  detail::ScanPolicy policy = policy_for(device, size_of(spec.dtype));
  const auto take = [&](const detail::TileShapePolicy& shape) {
    if (shape.workgroup_size != 0) policy.shape = shape;
  };
  take(policy.compaction_shape);
  if (spec.compaction == Compaction::run_length_encode) take(policy.compaction_runs_shape);
  if (in_place) take(policy.compaction_in_place_shape);
  return policy;
}

// The byte offsets of a chunk's input (and flags) bindings.
BindingSet::Offsets compaction_offsets(const CompactionBuffers& buffers, std::size_t element,
                                       std::size_t flag_bytes) {
  BindingSet::Offsets offsets{};
  offsets[GS_COMPACT_BINDING_INPUT_VECTORS] = buffers.in_offset * element;
  offsets[GS_COMPACT_BINDING_FLAGS] = buffers.in_offset * (buffers.flags ? flag_bytes : element);
  return offsets;
}

}  // namespace

CompactionBindingSet::CompactionBindingSet(std::shared_ptr<const Context> context,
                                           VkDescriptorSetLayout layout,
                                           const CompactionBuffers& buffers, std::size_t element,
                                           std::size_t flag_bytes)
    : BindingSet(std::move(context), layout, compaction_bindings(buffers),
                 compaction_offsets(buffers, element, flag_bytes)) {}

CompactionKernels::CompactionKernels(std::shared_ptr<const Context> context,
                                     std::shared_ptr<PipelineCache> pipelines,
                                     const CompactSpec& spec, const testing::Options& options)
    : context_(std::move(context)),
      pipelines_(std::move(pipelines)),
      shape_(choose_shape(*context_, spec.dtype, compaction_policy(context_->info(), spec, false),
                          options)),
      in_place_shape_(choose_shape(*context_, spec.dtype,
                                   compaction_policy(context_->info(), spec, true), options)),
      blocking_mask_(options.blocking_mask.value_or(GS_NO_BLOCKING)),
      statistics_(options.statistics) {
  // The count is 64-bit in every variant.
  if (!context_->has_int64()) {
    throw DeviceError(context_->info().name +
                      " has no 64-bit integer support in shaders; compaction needs it for "
                      "its 64-bit counts");
  }
  if (spec.dtype == DType::f64 && !context_->has_float64()) {
    throw DeviceError(context_->info().name + " has no 64-bit float support in shaders");
  }
  detail::check_options(spec.algorithm, options);
  const bool fallback = spec.algorithm == Algorithm::csdldf;
  const bool can_pack = context_->has_int64_atomics();
  if (options.tile_state == testing::TileState::packed && !can_pack) {
    throw UsageError("a packed tile state needs 64-bit buffer atomics, which " +
                     context_->info().name + " does not have");
  }
  // Run-length encoding has builds of its own: its tile value is two words, the others' one.
  const std::string kernel =
      spec.compaction == Compaction::run_length_encode ? "select_runs" : "select";
  const bool packed = can_pack && options.tile_state != testing::TileState::split;
  if (options.int16_positions.value_or(false) && !context_->has_int16()) {
    throw UsageError("16-bit staged positions need shaderInt16, which " + context_->info().name +
                     " does not have");
  }
  // The staged positions' form (shaders/CMakeLists.txt, compaction_variant).
  const std::string positions =
      options.int16_positions.value_or(context_->has_int16()) ? "_int16" : "";
  shader_ = kernel_name(kernel + (packed ? "_packed" : "") + positions, spec.dtype);
  wide_shader_ = kernel_name(kernel + (packed ? "_wide_packed" : "_wide") + positions, spec.dtype);
  if (packed) spine_word_bytes_ = sizeof(std::uint64_t);
  const detail::ScanPolicy& policy = policy_for(context_->info(), size_of(spec.dtype));
  spec_[GS_SPEC_SUBGROUP_SIZE] = shape_.subgroup_size;
  spec_[GS_SPEC_WORKGROUP_SIZE] = shape_.workgroup_size;
  spec_[GS_SPEC_VECTORS_PER_THREAD] = shape_.vectors_per_thread;
  spec_[GS_SPEC_FALLBACK] = fallback;
  spec_[GS_SPEC_MAX_SPINS] = fallback ? csdldf_max_spins(context_->info(), options.tuning.max_spins)
                                      : csdl_wait_limit(context_->info());
  spec_[GS_SPEC_STATISTICS] = options.statistics;
  spec_[GS_SPEC_LOOKBACK_DEPTH] =
      options.lookback_depth ? options.lookback_depth : std::max(1u, policy.lookback_depth);
  if (spec_[GS_SPEC_LOOKBACK_DEPTH] > 16) throw UsageError("look-back depth must be in [1, 16]");
  const bool dispatch_order = options.dispatch_order.value_or(fallback && policy.dispatch_order);
  if (dispatch_order && context_->info().is_cpu()) {
    throw UsageError("dispatch-order tiles are for GPUs; " + context_->info().name +
                     " may start workgroups far out of order");
  }
  spec_[GS_SPEC_DISPATCH_ORDER] = dispatch_order;
  const bool flagged = takes_flags(spec.compaction);
  const std::uint32_t flag_words =
      flagged ? static_cast<std::uint32_t>(size_of(spec.flags_dtype) / 4) : 1u;
  spec_[GS_SPEC_COMPACTION] = GS_COMPACTION_SPEC(operation_code(spec.compaction),
                                                 predicate_code(spec.predicate), flag_words, 0u) |
                              (options.wide_row_counts ? GS_COMPACTION_WIDE_ROW_COUNTS : 0u);
  // In place is a pipeline of its own, built at the first in-place run, so that runs out of
  // place pay nothing for its claims and fences.
  in_place_spec_ = spec_;
  in_place_spec_[GS_SPEC_COMPACTION] |= GS_COMPACTION_SPEC(0u, 0u, 0u, 1u);
  in_place_spec_[GS_SPEC_WORKGROUP_SIZE] = in_place_shape_.workgroup_size;
  in_place_spec_[GS_SPEC_VECTORS_PER_THREAD] = in_place_shape_.vectors_per_thread;
  // The workgroup stages its tile in shared memory (compaction.glsl): out of place where each
  // staged element lies in the tile, 16 bits an element, in place (select and unique) the
  // elements themselves; run-length encoding also each subgroup's last head.
  const bool rle = spec.compaction == Compaction::run_length_encode;
  output_element_bytes_ = rle ? 8 : size_of(spec.dtype);
  input_element_bytes_ =
      flagged ? std::max(size_of(spec.dtype), size_of(spec.flags_dtype)) : size_of(spec.dtype);
  if (shape_.elements() > (std::size_t{1} << 16)) {
    throw UsageError(
        "a compaction tile holds at most 65536 elements (positions in a tile are "
        "staged in 16 bits); " +
        std::to_string(shape_.workgroup_size) + " x " + std::to_string(shape_.vectors_per_thread) +
        " vectors hold " + std::to_string(shape_.elements()));
  }
  // The scatter's indices into a binding are 32-bit (compaction.glsl); a test may shrink it.
  binding_output_elements_ =
      std::min((context_->info().max_binding_bytes & ~std::size_t{31}) / output_element_bytes_,
               (std::size_t{1} << 32) - 1);
  if (options.output_binding_elements != 0) {
    binding_output_elements_ = std::min(binding_output_elements_, options.output_binding_elements);
  }
  wide_ = options.wide_outputs.value_or(context_->has_buffer_device_address());
  if (wide_ && !context_->has_buffer_device_address()) {
    throw UsageError("outputs past one binding need bufferDeviceAddress, which " +
                     context_->info().name + " does not have");
  }
  const bool may_run_in_place = runs_in_place(spec.compaction);
  // The per-subgroup partials of the larger workgroup of the two shapes this spec may run.
  const std::size_t subgroups =
      std::max(shape_.workgroup_size, may_run_in_place ? in_place_shape_.workgroup_size : 0u) /
      shape_.subgroup_size;
  const std::size_t staged_elements =
      std::max(shape_.elements(), may_run_in_place ? in_place_shape_.elements() : 0u);
  const std::size_t staged_bytes = std::max<std::size_t>(
      std::size_t{shape_.elements()} * 2,
      may_run_in_place ? std::size_t{in_place_shape_.elements()} * size_of(spec.dtype) : 0);
  const std::size_t shared = staged_bytes + (rle ? 4 : 2) * subgroups * 4 + 64;
  if (shared > context_->limits().maxComputeSharedMemorySize) {
    throw UsageError("a compaction tile of " + std::to_string(staged_elements) + " " +
                     std::string(to_string(spec.dtype)) + " elements needs more shared memory (" +
                     std::to_string(shared) + " bytes) than " + context_->info().name + " has");
  }
  // As for the scans (ScanKernels): the control words are reset where the kernel uses the
  // tile counter, csdl's report or the statistics.
  resets_control_ = !dispatch_order || !fallback || options.statistics;
}

std::size_t CompactionKernels::max_elements() const {
  // The input's window and select-flagged's flags' (up to 8 bytes a flag).
  const std::size_t by_binding =
      (context_->info().max_binding_bytes & ~std::size_t{31}) / input_element_bytes_;
  // Element indices and counts within a run are 32-bit in the shader.
  const std::size_t by_index =
      (std::size_t{1} << 32) - std::max(shape_.elements(), in_place_shape_.elements());
  return std::min(by_binding, by_index);
}

std::size_t CompactionKernels::max_total_elements() const {
  // Chunks whose outputs may lie past one binding run the wide pipeline, which needs buffer
  // device addresses; without them the outputs must fit one binding each (run-length
  // encoding's lengths take 8 bytes an element).
  return writes_wide() ? SIZE_MAX : binding_output_elements_;
}

bool CompactionKernels::binding_holds(std::size_t first, std::size_t n) const {
  // A chunk's kept elements, rejected ones and run lengths lie at positions below its end.
  return first + n <= binding_output_elements_;
}

std::size_t CompactionKernels::spine_bytes(std::size_t n, bool in_place) const {
  const std::size_t tiles = ceil_div(n, tile_shape(in_place).elements());
  // In place, a 32-bit claim word a tile after the tile-state words (in_place.glsl), rounded
  // up to the 64-bit words the packed state clears in.
  const std::size_t claims = in_place ? (tiles * 4 + 7) / 8 * 8 : 0;
  return tiles * spine_bytes_per_tile + claims;
}

void CompactionKernels::record(VkCommandBuffer cmd, const CompactionBuffers& buffers,
                               VkDescriptorSet set, std::size_t n, Value constant, bool in_place,
                               const CompactionChunk& chunk) const {
  const VolkDeviceTable& vk = context_->vk();
  if (chunk.index > 0) {
    // The chunk before: its outputs, count, carry and control words are written.
    context_->barrier(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                      VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
                      VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT |
                          VK_ACCESS_2_TRANSFER_WRITE_BIT);
  }
  PushConstants push{};
  // compaction_interface.h: the chunk in the row fields.
  if (chunk.wide && in_place) throw std::logic_error("an in-place run is never wide");
  push.row_length = static_cast<std::uint32_t>(chunk.first);
  push.row_phase = chunk.index;
  push.lead_lo = chunk.more ? 1u : 0u;
  push.lead_hi = static_cast<std::uint32_t>(std::uint64_t{chunk.first} >> 32);
  push.n = static_cast<std::uint32_t>(n);
  push.tile_count = ceil_div(n, tile_shape(in_place).elements());
  push.blocking_mask = blocking_mask_;
  push.init_lo = static_cast<std::uint32_t>(constant.bits);
  push.init_hi = static_cast<std::uint32_t>(constant.bits >> 32);
  // The run's half of the spine was zeroed by the run before it; this one zeroes the other
  // half for the run after it (docs/protocol.md, "Reset between runs").
  const SpineBuffer::Turn turn = buffers.spine.take(spine_bytes(n, in_place));
  push.spine_base = static_cast<std::uint32_t>(turn.base / spine_word_bytes_);
  push.clear_base = static_cast<std::uint32_t>(turn.clear_base / spine_word_bytes_);
  push.clear_count = static_cast<std::uint32_t>(turn.clear_bytes / spine_word_bytes_);
  // The last tile adds the run's count to what the count buffer holds: zero, or the count
  // of the chunks before.
  if (chunk.index == 0) vk.vkCmdFillBuffer(cmd, buffers.count.handle(), 0, 8, 0);
  if (chunk.wide) {
    // The barrier on the chunk before (above) ordered its reads of these words first.
    const std::array<VkDeviceAddress, 2> addresses{
        buffers.out.device_address(), buffers.second ? buffers.second->device_address() : 0};
    vk.vkCmdUpdateBuffer(cmd, buffers.carry.handle(), GS_COMPACT_OUTPUT_ADDRESS * 4,
                         sizeof(addresses), addresses.data());
  }
  if (chunk.index == 0 && (resets_control_ || turn.clear_bytes == 0)) {
    vk.vkCmdFillBuffer(cmd, buffers.control.handle(), 0, GS_CONTROL_RUN_WORDS * 4, 0);
  } else if (chunk.index > 0 && resets_control_) {
    // The rest add up over the chunks; the starvation mark goes by spine halves, as between
    // runs (run_control.glsl).
    vk.vkCmdFillBuffer(cmd, buffers.control.handle(), GS_CONTROL_TILE_COUNTER * 4, 4, 0);
  }
  context_->barrier(cmd, VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                    VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                    VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT);
  const std::uint32_t max_x = context_->limits().maxComputeWorkGroupCount[0];
  const std::uint32_t width = std::min(push.tile_count, max_x);
  const std::uint32_t height = ceil_div(push.tile_count, width);
  push.grid_width = width;
  vk.vkCmdBindPipeline(
      cmd, VK_PIPELINE_BIND_POINT_COMPUTE,
      pipelines_->get(chunk.wide ? wide_shader_ : shader_, in_place ? in_place_spec_ : spec_));
  vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines_->layout(), 0, 1, &set,
                             0, nullptr);
  vk.vkCmdPushConstants(cmd, pipelines_->layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push),
                        &push);
  vk.vkCmdDispatch(cmd, width, height, 1);
}

}  // namespace gpuscan::vulkan
