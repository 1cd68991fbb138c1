#include "vulkan/scan_kernels.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/options.hpp"
#include "shaders/common/interface.h"
#include "shaders/common/tile_state.h"
#include "vulkan/check.hpp"
#include "vulkan/policy.hpp"

namespace gpuscan::vulkan {
namespace {

bool is_power_of_two(std::uint32_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

std::uint32_t split_words(DType dtype) {
  return static_cast<std::uint32_t>(size_of(dtype) * 8 / GS_PIECE_BITS);
}

std::uint32_t ceil_div(std::size_t a, std::size_t b) {
  return static_cast<std::uint32_t>((a + b - 1) / b);
}

}  // namespace

// The tile shape of large inputs: the policy table's, or what the options fix.
TileShape choose_shape(const Context& context, DType dtype, const detail::ScanPolicy& policy,
                       const testing::Options& options) {
  TileShape shape{policy.shape.workgroup_size, policy.shape.vectors_per_thread};
  shape.vector_elements = static_cast<std::uint32_t>(GS_VECTOR_BYTES / size_of(dtype));
  if (options.workgroup_size) shape.workgroup_size = options.workgroup_size;
  if (options.vectors_per_thread) shape.vectors_per_thread = options.vectors_per_thread;
  const std::uint32_t hardware = context.subgroup_size();
  shape.subgroup_size = options.subgroup_size ? options.subgroup_size : hardware;
  const std::string where = " on " + context.info().name;
  if (!is_power_of_two(shape.subgroup_size) || shape.subgroup_size < 4 ||
      shape.subgroup_size > hardware) {
    throw UsageError("logical subgroup size " + std::to_string(shape.subgroup_size) +
                     " must be a power of two in [4, " + std::to_string(hardware) + "]" + where);
  }
  if (!is_power_of_two(shape.workgroup_size) || shape.workgroup_size < hardware ||
      shape.workgroup_size > context.max_workgroup_size()) {
    throw UsageError("workgroup size " + std::to_string(shape.workgroup_size) +
                     " must be a power of two in [" + std::to_string(hardware) + ", " +
                     std::to_string(context.max_workgroup_size()) + "]" + where);
  }
  if (shape.vectors_per_thread == 0 || shape.vectors_per_thread > 64) {
    throw UsageError("vectors per thread must be in [1, 64]");
  }
  return shape;
}

namespace {

// The policy's shape for small inputs, where the options fix no shape and the device takes
// workgroups that large.
std::optional<TileShape> choose_small_shape(const Context& context, const TileShape& shape,
                                            const detail::ScanPolicy& policy,
                                            const testing::Options& options) {
  if (policy.small_below_bytes == 0 || options.workgroup_size || options.vectors_per_thread ||
      context.max_workgroup_size() < policy.small_shape.workgroup_size) {
    return std::nullopt;
  }
  TileShape small = shape;
  small.workgroup_size = policy.small_shape.workgroup_size;
  small.vectors_per_thread = policy.small_shape.vectors_per_thread;
  return small;
}

// The policy's shape for batched runs, where the options fix no shape and the policy has
// one (their segmented scan needs more registers than the plain one: docs/performance.md).
std::optional<TileShape> choose_rows_shape(const Context& context, const TileShape& shape,
                                           const detail::ScanPolicy& policy,
                                           const testing::Options& options) {
  if (policy.rows_shape.workgroup_size == 0 || options.workgroup_size ||
      options.vectors_per_thread ||
      context.max_workgroup_size() < policy.rows_shape.workgroup_size ||
      shape.subgroup_size > policy.rows_shape.workgroup_size) {
    return std::nullopt;
  }
  TileShape rows = shape;
  rows.workgroup_size = policy.rows_shape.workgroup_size;
  rows.vectors_per_thread = policy.rows_shape.vectors_per_thread;
  return rows;
}

}  // namespace

std::string kernel_name(std::string_view kernel, DType dtype) {
  std::string name(kernel);
  name.append(".").append(to_string(dtype));
  return name;
}

// Look-back steps without progress before csdl gives up. On a GPU with forward progress
// a wait never comes near 2^22. A CPU driver must stay under llvmpipe's limit of about
// 65535 loop iterations per invocation: a step takes about four, and 16384 steps were
// seen to hit the limit (wrong output, nothing reported) where 8192 never did.
std::uint32_t csdl_wait_limit(const DeviceInfo& info) {
  return info.is_cpu() ? 8192 : 1u << 22;
}

// csdldf's max_spins as the shader gets it: a look-back waits up to 64 times max_spins
// (shaders/chained_scan.comp, patience()), so on a CPU driver max_spins is capped at
// csdl's bound over 64, which keeps the longest wait inside llvmpipe's loop limit (a
// longer one is cut short: wrong output, nothing reported). Only the wait before a
// fallback shortens; the result stays exact.
std::uint32_t csdldf_max_spins(const DeviceInfo& info, std::uint32_t requested) {
  const std::uint32_t cap = info.is_cpu() ? csdl_wait_limit(info) / 64 : requested;
  return std::clamp<std::uint32_t>(requested, 1, std::max<std::uint32_t>(cap, 1));
}

namespace {

// The eight bindings of shaders/common/interface.h over a run's buffers: the input and
// the output each twice (vector and element views), the spine twice (words and values),
// the control words, and a segmented run's segment starts (the control words where there
// are none). Descriptor sets and pushed descriptors alike take them from here.
template <class T>
std::array<T, GS_BINDING_COUNT> per_binding(T in, T out, T spine, T control, T segments) {
  std::array<T, GS_BINDING_COUNT> bound{};
  bound[GS_BINDING_INPUT_VECTORS] = bound[GS_BINDING_INPUT_SCALARS] = in;
  bound[GS_BINDING_OUTPUT_VECTORS] = bound[GS_BINDING_OUTPUT_SCALARS] = out;
  bound[GS_BINDING_SPINE_WORDS] = bound[GS_BINDING_SPINE_VALUES] = spine;
  bound[GS_BINDING_CONTROL] = control;
  bound[GS_BINDING_SEGMENT_STARTS] = segments ? segments : control;
  return bound;
}

}  // namespace

SpineBuffer::SpineBuffer(std::shared_ptr<const Context> context, std::size_t half_bytes)
    : buffer_(context, 2 * half_bytes), half_bytes_(half_bytes) {
  context->submit([&](VkCommandBuffer cmd) {
    context->vk().vkCmdFillBuffer(cmd, buffer_.handle(), 0, VK_WHOLE_SIZE, 0);
  });
}

SpineBuffer::Turn SpineBuffer::take(std::size_t bytes) {
  if (bytes > half_bytes_) throw std::logic_error("a run needs more spine than its half holds");
  const detail::SpineHalves::Turn turn = halves_.take(bytes);
  return {turn.half * half_bytes_, turn.clear_half * half_bytes_, turn.clear_count};
}

BindingSet::BindingSet(std::shared_ptr<const Context> context, VkDescriptorSetLayout layout,
                       const ScanBuffers& buffers)
    : BindingSet(
          std::move(context), layout,
          per_binding<const VulkanBuffer*>(&buffers.in, &buffers.out, &buffers.spine.buffer(),
                                           &buffers.control, buffers.segment_starts),
          per_binding<VkDeviceSize>(buffers.in_offset, buffers.out_offset, 0, 0, 0)) {}

BindingSet::BindingSet(std::shared_ptr<const Context> context, VkDescriptorSetLayout layout,
                       const Buffers& bound, const Offsets& offsets)
    : context_(std::move(context)) {
  const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, GS_BINDING_COUNT};
  VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pool_info.maxSets = 1;
  pool_info.poolSizeCount = 1;
  pool_info.pPoolSizes = &size;
  check(context_->vk().vkCreateDescriptorPool(context_->device(), &pool_info, nullptr, &pool_),
        "vkCreateDescriptorPool");
  VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  alloc.descriptorPool = pool_;
  alloc.descriptorSetCount = 1;
  alloc.pSetLayouts = &layout;
  check(context_->vk().vkAllocateDescriptorSets(context_->device(), &alloc, &set_),
        "vkAllocateDescriptorSets");

  const VkDeviceSize max_range = context_->limits().maxStorageBufferRange;
  std::array<VkDescriptorBufferInfo, GS_BINDING_COUNT> infos{};
  std::array<VkWriteDescriptorSet, GS_BINDING_COUNT> writes{};
  for (std::uint32_t i = 0; i < GS_BINDING_COUNT; ++i) {
    const VkDeviceSize rest = bound[i]->allocated() - offsets[i];
    infos[i] = {bound[i]->handle(), offsets[i], std::min(rest, max_range & ~VkDeviceSize{31})};
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set_;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  context_->vk().vkUpdateDescriptorSets(context_->device(), GS_BINDING_COUNT, writes.data(), 0,
                                        nullptr);
}

BindingSet::~BindingSet() {
  context_->vk().vkDestroyDescriptorPool(context_->device(), pool_, nullptr);
}

ScanKernels::ScanKernels(std::shared_ptr<const Context> context,
                         std::shared_ptr<PipelineCache> pipelines, DType dtype, Op op, Kind kind,
                         std::optional<Algorithm> algorithm, const testing::Options& options)
    : context_(std::move(context)),
      pipelines_(std::move(pipelines)),
      dtype_(dtype),
      kernel_(!algorithm                      ? Kernel::copy
              : *algorithm == Algorithm::rts  ? Kernel::reduce_then_scan
              : *algorithm == Algorithm::csdl ? Kernel::chained_lookback
                                              : Kernel::chained_fallback),
      policy_(policy_for(context_->info(), size_of(dtype))),
      shape_(choose_shape(*context_, dtype, policy_, options)),
      small_shape_(choose_small_shape(*context_, shape_, policy_, options)),
      rows_shape_(choose_rows_shape(*context_, shape_, policy_, options)),
      small_below_bytes_(policy_.small_below_bytes),
      blocking_mask_(options.blocking_mask.value_or(GS_NO_BLOCKING)),
      round_rows_(options.round_rows) {
  if (size_of(dtype) == 8 && !context_->has_int64()) {
    throw DeviceError(context_->info().name + " has no 64-bit integer support in shaders; " +
                      std::string(to_string(dtype)) + " cannot run on it");
  }
  if (dtype == DType::f64 && !context_->has_float64()) {
    throw DeviceError(context_->info().name + " has no 64-bit float support in shaders");
  }
  if (algorithm) detail::check_options(*algorithm, options);
  shader_ = kernel_name(kernel_ == Kernel::copy               ? "memcpy"
                        : kernel_ == Kernel::reduce_then_scan ? "rts"
                                                              : "chained_scan",
                        dtype);
  const bool can_pack = context_->has_int64_atomics();
  if (chained() && options.tile_state == testing::TileState::packed && !can_pack) {
    throw UsageError("a packed tile state needs 64-bit buffer atomics, which " +
                     context_->info().name + " does not have");
  }
  const bool packed = chained() && can_pack && options.tile_state != testing::TileState::split;
  if (packed) {
    shader_ = kernel_name("chained_scan_packed", dtype);
    spine_word_bytes_ = sizeof(std::uint64_t);
  }
  if (chained()) {
    aligned_shader_ =
        kernel_name(packed ? "chained_scan_packed_aligned" : "chained_scan_aligned", dtype);
  }
  spec_[GS_SPEC_SUBGROUP_SIZE] = shape_.subgroup_size;
  spec_[GS_SPEC_OP] = static_cast<std::uint32_t>(op);
  spec_[GS_SPEC_KIND] = static_cast<std::uint32_t>(kind);
  spec_[GS_SPEC_FALLBACK] = kernel_ == Kernel::chained_fallback;
  spec_[GS_SPEC_MAX_SPINS] = kernel_ == Kernel::chained_lookback
                                 ? csdl_wait_limit(context_->info())
                                 : csdldf_max_spins(context_->info(), options.tuning.max_spins);
  spec_[GS_SPEC_STATISTICS] = options.statistics;
  spec_[GS_SPEC_LOOKBACK_DEPTH] =
      options.lookback_depth ? options.lookback_depth : std::max(1u, policy_.lookback_depth);
  // csdldf takes tiles in dispatch order where the policy says so (GPUs): no atomic round
  // trip before a workgroup's loads. The counter stays for csdl, which needs it, and on CPU
  // drivers.
  const bool dispatch_order = options.dispatch_order.value_or(kernel_ == Kernel::chained_fallback &&
                                                              policy_.dispatch_order);
  if (dispatch_order && context_->info().is_cpu()) {
    // A CPU driver may start the second half of the grid first; a tile there then falls
    // back through hundreds of unstarted predecessors, and llvmpipe cuts loops that long.
    throw UsageError("dispatch-order tiles are for GPUs; " + context_->info().name +
                     " may start workgroups far out of order");
  }
  spec_[GS_SPEC_DISPATCH_ORDER] = dispatch_order;
  // A run resets the control words first only where its kernel uses the tile counter,
  // csdl's report of a look-back that gave up, or statistics. The kernel itself clears the
  // next run's starvation mark (docs/protocol.md, "Reset between runs").
  resets_control_ = !dispatch_order || kernel_ == Kernel::chained_lookback || options.statistics;
  if (spec_[GS_SPEC_LOOKBACK_DEPTH] > 16) throw UsageError("look-back depth must be in [1, 16]");
  // The workgroup's shared memory must hold the partials of two tiles.
  const std::size_t shared =
      2 * (shape_.workgroup_size / shape_.subgroup_size) * size_of(dtype) + 64;
  if (shared > context_->limits().maxComputeSharedMemorySize) {
    throw UsageError("tile shape needs more shared memory than " + context_->info().name + " has");
  }
}

const TileShape& ScanKernels::shape_for(std::size_t n, bool rows) const {
  if (rows && rows_shape_) return *rows_shape_;
  return small_shape_ && n * size_of(dtype_) < small_below_bytes_ ? *small_shape_ : shape_;
}

SpecConstants ScanKernels::spec_for(std::size_t n, bool rows) const {
  SpecConstants spec = spec_;
  spec[GS_SPEC_WORKGROUP_SIZE] = shape_for(n, rows).workgroup_size;
  spec[GS_SPEC_VECTORS_PER_THREAD] = shape_for(n, rows).vectors_per_thread;
  return spec;
}

std::size_t ScanKernels::max_elements() const {
  const std::size_t by_binding =
      (context_->info().max_binding_bytes & ~std::size_t{31}) / size_of(dtype_);
  // Element indices are 32-bit in the shaders, and a grid has at most 65535^2 workgroups.
  // (The small shape serves only small inputs.)
  const std::size_t largest_tile =
      std::max(shape_.elements(), rows_shape_ ? rows_shape_->elements() : 0u);
  const std::size_t by_index = (std::size_t{1} << 32) - largest_tile;
  return std::min(by_binding, by_index);
}

std::size_t ScanKernels::spine_bytes(std::size_t n) const {
  // Enough for a plain or a batched run of n elements, whichever has more tiles; row-aligned
  // tiles add at most one a row to the plain scan's (core/policy.hpp).
  const std::size_t plain_tiles = ceil_div(n, shape_for(n).elements());
  const std::size_t aligned_tiles =
      plain_tiles + n / (detail::kAlignedMinTilesPerRow * shape_for(n).elements());
  const std::size_t tiles =
      std::max<std::size_t>(aligned_tiles, ceil_div(n, shape_for(n, true).elements()));
  return tiles *
         std::max<std::size_t>(split_words(dtype_) * sizeof(std::uint32_t), size_of(dtype_));
}

std::size_t ScanKernels::spine_bytes_up_to(std::size_t max_n) const {
  std::size_t bytes = spine_bytes(max_n);
  if (small_shape_ && small_below_bytes_ > 0) {
    const std::size_t largest_small = (small_below_bytes_ - 1) / size_of(dtype_);
    bytes = std::max(bytes, spine_bytes(std::min(max_n, largest_small)));
  }
  return bytes;
}

ScanKernels::RunTiles ScanKernels::run_tiles(std::size_t n, const RowLayout* rows,
                                             bool element_offsets) const {
  if (rows == nullptr) return RunTiles::plain;
  if (rows->segments) return RunTiles::segments;
  const bool aligned = chained() && !element_offsets &&
                       detail::aligned_row_tiles(n, rows->length, rows->phase, size_of(dtype_),
                                                 shape_for(n).elements()) != 0;
  return aligned ? RunTiles::aligned_rows : RunTiles::rows;
}

PushConstants ScanKernels::push_constants(std::size_t n, Value init, RunTiles tiles,
                                          const RowLayout* rows) const {
  PushConstants push{};
  push.n = static_cast<std::uint32_t>(n);
  const bool segmented = tiles == RunTiles::rows || tiles == RunTiles::segments;
  push.tile_count = ceil_div(n, shape_for(n, segmented).elements());
  push.blocking_mask = blocking_mask_;
  push.init_lo = static_cast<std::uint32_t>(init.bits);
  push.init_hi = static_cast<std::uint32_t>(init.bits >> 32);
  if (rows == nullptr) return push;
  if (!chained()) throw UsageError("batched scans take csdldf or csdl, not rts");
  push.row_length = rows->length;
  // A segmented run has no phase; there row_phase is the margin of the list entries whose
  // segments a reduction writes (shaders/common/row_scan.glsl, store_row_totals).
  push.row_phase = rows->segments ? (rows->outputs_within_list ? 1 : 0) : rows->phase;
  push.lead_lo = static_cast<std::uint32_t>(rows->lead.bits);
  push.lead_hi = static_cast<std::uint32_t>(rows->lead.bits >> 32);
  push.out_shift += rows->first_row;
  if (tiles == RunTiles::aligned_rows) {
    // Each row takes tiles of its own (n < 2^31: row_layout), the last part full.
    push.tile_count = static_cast<std::uint32_t>(detail::aligned_row_tiles(
        n, rows->length, rows->phase, size_of(dtype_), shape_for(n).elements()));
  }
  return push;
}

void ScanKernels::dispatch(VkCommandBuffer cmd, const Binding& binding, VkPipeline pipeline,
                           const PushConstants& push, std::uint32_t groups) const {
  // More workgroups than one grid dimension holds go into a second dimension; shaders
  // linearise the index and skip the surplus.
  const std::uint32_t max_x = context_->limits().maxComputeWorkGroupCount[0];
  const std::uint32_t width = std::min(groups, max_x);
  const std::uint32_t height = ceil_div(groups, width);
  PushConstants with_grid = push;
  with_grid.grid_width = width;
  const VolkDeviceTable& vk = context_->vk();
  vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  if (binding.pushed != nullptr) {
    const PushedBuffers& b = *binding.pushed;
    const auto bound = per_binding<const VkDescriptorBufferInfo*>(
        &b.in, &b.out, &b.spine, &b.control,
        b.segment_starts.buffer != VK_NULL_HANDLE ? &b.segment_starts : nullptr);
    std::array<VkWriteDescriptorSet, GS_BINDING_COUNT> writes{};
    for (std::uint32_t i = 0; i < GS_BINDING_COUNT; ++i) {
      writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[i].dstBinding = i;
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[i].pBufferInfo = bound[i];
    }
    vk.vkCmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines_->layout(), 0,
                                 GS_BINDING_COUNT, writes.data());
  } else {
    vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines_->layout(), 0, 1,
                               &binding.set, 0, nullptr);
  }
  vk.vkCmdPushConstants(cmd, pipelines_->layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0,
                        sizeof(with_grid), &with_grid);
  vk.vkCmdDispatch(cmd, width, height, 1);
}

RowLayout row_layout(std::uint64_t length, std::uint64_t phase, std::size_t n, Value lead) {
  if (n >= (std::size_t{1} << 31)) {
    throw UsageError("a batched run on Vulkan takes fewer than 2^31 elements");
  }
  if (length <= n) {
    return {static_cast<std::uint32_t>(length), static_cast<std::uint32_t>(phase), lead, 0};
  }
  // At most one row starts in the run, at s (s >= n: none). Rows of n + 1 placed so that
  // one starts at s give the same starts, row ends and row numbers within the run.
  const std::uint64_t s = phase == 0 ? 0 : length - phase;
  const auto equivalent = static_cast<std::uint32_t>(n + 1);
  const std::uint64_t start = std::min<std::uint64_t>(s, n);
  return {equivalent, static_cast<std::uint32_t>((equivalent - start) % equivalent), lead, 0};
}

void ScanKernels::record(VkCommandBuffer cmd, const ScanBuffers& buffers, VkDescriptorSet set,
                         std::size_t n, Value init, const RowLayout* rows) const {
  const RunTiles tiles = run_tiles(n, rows, false);
  PushConstants push = push_constants(n, init, tiles, rows);
  if (tiles == RunTiles::segments && buffers.segment_starts == nullptr) {
    throw std::logic_error("a segmented run without its segment starts");
  }
  if (chained()) {
    // The run's half of the spine is zeroed (all NOT_READY) by the run before it; this
    // one zeroes the other half for the run after it.
    const SpineBuffer::Turn turn = buffers.spine.take(spine_bytes(n));
    push.spine_base = static_cast<std::uint32_t>(turn.base / spine_word_bytes_);
    push.clear_base = static_cast<std::uint32_t>(turn.clear_base / spine_word_bytes_);
    push.clear_count = static_cast<std::uint32_t>(turn.clear_bytes / spine_word_bytes_);
    // So does the first run on a spine: the starvation mark has a bit per spine half
    // (shaders/common/run_control.glsl), and a run on an earlier spine may have left one.
    if (resets_control_ || turn.clear_bytes == 0) {
      context_->vk().vkCmdFillBuffer(cmd, buffers.control.handle(), 0, GS_CONTROL_RUN_WORDS * 4, 0);
      // All transfer stages: vkCmdFillBuffer is a clear command, which older validation
      // layers (Debian's 1.3.239) take for a copy: a false READ_AFTER_WRITE hazard.
      context_->barrier(cmd, VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                        VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                        VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT);
    }
  }
  record_dispatches(cmd, {.set = set}, n, push, false, tiles);
}

void ScanKernels::record_resubmittable(VkCommandBuffer cmd, const PushedBuffers& buffers,
                                       std::size_t n, Value init, const RowLayout* rows) const {
  if (!pipelines_->push_descriptors()) throw std::logic_error("pipelines without push descriptors");
  const bool segments = rows != nullptr && rows->segments;
  if (segments != (buffers.segment_starts.buffer != VK_NULL_HANDLE)) {
    throw std::logic_error("segment starts bound for a run that is not segmented, or not bound");
  }
  const bool element_offsets = buffers.in_shift != 0 || buffers.out_shift != 0;
  const RunTiles tiles = run_tiles(n, rows, element_offsets);
  // Before any command: it refuses rts for batched runs.
  PushConstants push = push_constants(n, init, tiles, rows);
  push.in_shift = buffers.in_shift;
  push.out_shift += buffers.out_shift;
  // Zeroes the spine the run uses (all NOT_READY) and its control words, after whatever an
  // earlier run recorded on the same workspace did with them. (rts writes its tile
  // reductions before reading them, and needs no zeros.)
  if (chained()) {
    const VolkDeviceTable& vk = context_->vk();
    context_->barrier(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                      VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
    vk.vkCmdFillBuffer(cmd, buffers.control.buffer, buffers.control.offset,
                       GS_CONTROL_RUN_WORDS * 4, 0);
    vk.vkCmdFillBuffer(cmd, buffers.spine.buffer, buffers.spine.offset, spine_bytes(n), 0);
    context_->barrier(cmd, VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                      VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                      VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT);
  } else {
    // An earlier rts run's tile reductions must be read before this one overwrites them.
    context_->barrier(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_READ_BIT,
                      VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_WRITE_BIT);
  }
  record_dispatches(cmd, {.pushed = &buffers}, n, push, element_offsets, tiles);
}

void ScanKernels::record_dispatches(VkCommandBuffer cmd, const Binding& binding, std::size_t n,
                                    const PushConstants& push, bool element_offsets,
                                    RunTiles tiles) const {
  const bool segmented = tiles == RunTiles::rows || tiles == RunTiles::segments;
  SpecConstants spec = spec_for(n, segmented);
  spec[GS_SPEC_ELEMENT_OFFSETS] = element_offsets;
  spec[GS_SPEC_ROWS] = segmented;
  spec[GS_SPEC_SEGMENTS] = tiles == RunTiles::segments;
  spec[GS_SPEC_ROUND_ROWS] = tiles == RunTiles::aligned_rows &&
                             round_rows_.value_or(policy_.round_rows.holds(push.tile_count));
  const std::string& shader = tiles == RunTiles::aligned_rows ? aligned_shader_ : shader_;
  const auto compute_to_compute = [this, cmd] {
    context_->barrier(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                      VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT);
  };
  switch (kernel_) {
    case Kernel::chained_fallback:
    case Kernel::chained_lookback:
    case Kernel::copy:
      dispatch(cmd, binding, pipelines_->get(shader, spec), push, push.tile_count);
      break;
    case Kernel::reduce_then_scan: {
      SpecConstants phase = spec;
      phase[GS_SPEC_PHASE] = GS_RTS_REDUCE;
      dispatch(cmd, binding, pipelines_->get(shader_, phase), push, push.tile_count);
      compute_to_compute();
      phase[GS_SPEC_PHASE] = GS_RTS_SPINE;
      dispatch(cmd, binding, pipelines_->get(shader_, phase), push, 1);
      compute_to_compute();
      phase[GS_SPEC_PHASE] = GS_RTS_SCAN;
      dispatch(cmd, binding, pipelines_->get(shader_, phase), push, push.tile_count);
      break;
    }
  }
}

void ScanKernels::record_validation(VkCommandBuffer cmd, VkDescriptorSet set, std::size_t n,
                                    Value init, float tolerance, std::uint32_t row_length) const {
  if (spec_[GS_SPEC_KIND] == GS_KIND_REDUCE && kernel_ != Kernel::copy) return;
  SpecConstants spec = spec_for(n);
  spec[GS_SPEC_PHASE] = kernel_ == Kernel::copy ? GS_VALIDATE_COPY : GS_VALIDATE_SCAN;
  PushConstants push = push_constants(n, init);
  std::memcpy(&push.tolerance_bits, &tolerance, sizeof(tolerance));
  push.row_length = row_length;
  const std::uint32_t groups =
      std::min<std::uint32_t>(ceil_div(n, shape_for(n).workgroup_size), 4096);
  dispatch(cmd, {.set = set}, pipelines_->get(kernel_name("validate", dtype_), spec), push, groups);
}

}  // namespace gpuscan::vulkan
