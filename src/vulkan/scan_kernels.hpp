// The kernels of one scan algorithm (csdldf, csdl, rts) or the copy baseline for one
// dtype, operator and kind: their pipelines, tile shape and workspace sizes, and the commands that
// run them and check their output.
#pragma once

#include "vulkan/vk.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/policy.hpp"
#include "core/spine_halves.hpp"
#include "gpuscan/testing.hpp"
#include "vulkan/buffer.hpp"
#include "vulkan/pipeline_cache.hpp"
#include "vulkan/push_constants.hpp"

namespace gpuscan::vulkan {

struct TileShape {
  std::uint32_t workgroup_size = 256;
  std::uint32_t vectors_per_thread = 4;
  std::uint32_t subgroup_size = 32;
  std::uint32_t vector_elements = 4;  // elements in one 16-byte vector: 4, or 2 of 64 bits
  std::uint32_t elements() const { return vector_elements * workgroup_size * vectors_per_thread; }
};

// The pieces of the scans' configuration that the compaction kernels share
// (vulkan_compactor.cpp): the tile shape of large inputs (the policy's, or what the options
// fix, checked against the device), a shader variant's name ("chained_scan.u32"), csdl's
// wait before it gives up and csdldf's max_spins as the shader takes them.
TileShape choose_shape(const Context& context, DType dtype, const detail::ScanPolicy& policy,
                       const testing::Options& options);
std::string kernel_name(std::string_view kernel, DType dtype);
std::uint32_t csdl_wait_limit(const DeviceInfo& info);
std::uint32_t csdldf_max_spins(const DeviceInfo& info, std::uint32_t requested);

// The tile-state spine of the chained scans, in two halves that take turns: a run works in
// one half and zeroes the words the run before it wrote in the other, so that no run needs
// a fill and a barrier before it (docs/protocol.md, section 4). This holds only if runs
// execute in the order they are recorded, one after the other. rts keeps its tile
// reductions in the first half.
class SpineBuffer {
 public:
  // Both halves of `half_bytes` (a multiple of 8) start zeroed.
  SpineBuffer(std::shared_ptr<const Context> context, std::size_t half_bytes);
  const VulkanBuffer& buffer() const { return buffer_; }
  std::size_t half_bytes() const { return half_bytes_; }

  // Where a chained run that writes `bytes` works, and what it clears: byte offsets.
  struct Turn {
    std::size_t base, clear_base, clear_bytes;
  };
  // The next run's half; the run it describes must be recorded.
  Turn take(std::size_t bytes);

 private:
  VulkanBuffer buffer_;
  std::size_t half_bytes_;
  detail::SpineHalves halves_;  // in bytes
};

// The buffers one run binds: input, output, tile-state spine and control words. A run may
// see a window of the input and output (a chunk of a larger scan): byte offsets, which
// must meet the device's storage-buffer offset alignment; the window reaches to the end
// of the buffer or at most the device's binding limit.
struct ScanBuffers {
  const VulkanBuffer& in;
  const VulkanBuffer& out;
  SpineBuffer& spine;
  const VulkanBuffer& control;
  VkDeviceSize in_offset = 0;
  VkDeviceSize out_offset = 0;
  const VulkanBuffer* segment_starts = nullptr;  // a segmented run's (RowLayout::segments)
};

// The counts a run leaves in the control buffer, words GS_CONTROL_LOOKBACK_ABANDONED to
// GS_CONTROL_VALIDATION_ERRORS, in that order (`starved`: the starvation mark's bits).
struct RunCounts {
  std::uint32_t abandoned, spins, lookback_steps, fallbacks, insertions, starved, validation_errors;
  static constexpr std::size_t offset = GS_CONTROL_LOOKBACK_ABANDONED * sizeof(std::uint32_t);
  Statistics statistics() const { return {spins, lookback_steps, fallbacks, insertions}; }
};
static_assert(GS_CONTROL_SPINS == GS_CONTROL_LOOKBACK_ABANDONED + 1 &&
              GS_CONTROL_INSERTIONS == GS_CONTROL_LOOKBACK_ABANDONED + 4 &&
              GS_CONTROL_STARVED == GS_CONTROL_LOOKBACK_ABANDONED + 5 &&
              GS_CONTROL_VALIDATION_ERRORS == GS_CONTROL_LOOKBACK_ABANDONED + 6 &&
              sizeof(RunCounts) == 7 * sizeof(std::uint32_t));

// The same buffers as ranges of the application's VkBuffers (gpuscan/vulkan.hpp), pushed
// into the command buffer at each dispatch: the spine and the control words lie in the
// application's workspace, and are filled with zeros at the start of every run.
// `in_shift` and `out_shift` count the elements between where the in and out ranges begin
// (at an offset that meets the device's binding alignment) and where the data begins.
// `segment_starts`: a segmented run's list (RowLayout::segments), in the application's
// buffer; without one (a null buffer) the control words are bound there, unread.
struct PushedBuffers {
  VkDescriptorBufferInfo in, out, spine, control;
  VkDescriptorBufferInfo segment_starts{};
  std::uint32_t in_shift = 0, out_shift = 0;
};

// A batched run's rows as the shaders take them (docs/protocol.md, "Batched scans"): rows
// of `length` elements, the run's element 0 at `phase` in its row after `lead`; reductions
// write row r of the run at element first_row + r of the output binding.
// A segmented run (`segments`) reads its segment starts instead: `length` of them, in
// ScanBuffers::segment_starts, and a reduction writes the segment of start j at element
// first_row + j. A Scanner's chunk also writes the segments open at its start and its end
// (entries -1 and length - 1); with `outputs_within_list` only entries 0 to length - 2 are
// written, whatever the list holds: the caller's-memory API binds the application's CSR
// offsets (0 to n, one more than the segments), which the host cannot check.
struct RowLayout {
  std::uint32_t length = 0, phase = 0;
  Value lead;
  std::uint32_t first_row = 0;
  bool segments = false;
  bool outputs_within_list = false;
};
// The layout of a run of n elements whose rows are `length` long, element 0 at `phase`:
// rows longer than the run (up to 2^64) become equivalent ones below 2^31, which the
// shaders' 32-bit arithmetic takes.
RowLayout row_layout(std::uint64_t length, std::uint64_t phase, std::size_t n, Value lead);

// One descriptor set over the storage buffers of shaders/common/interface.h's layout, in a
// pool of its own: those of a ScanBuffers, or any buffer per binding (the compaction
// kernels'), each bound from its offset to its end or at most the device's binding limit.
class BindingSet {
 public:
  using Buffers = std::array<const VulkanBuffer*, GS_BINDING_COUNT>;
  using Offsets = std::array<VkDeviceSize, GS_BINDING_COUNT>;
  BindingSet(std::shared_ptr<const Context> context, VkDescriptorSetLayout layout,
             const ScanBuffers& buffers);
  BindingSet(std::shared_ptr<const Context> context, VkDescriptorSetLayout layout,
             const Buffers& bound, const Offsets& offsets = {});
  ~BindingSet();
  BindingSet(const BindingSet&) = delete;
  BindingSet& operator=(const BindingSet&) = delete;
  VkDescriptorSet handle() const { return set_; }

 private:
  std::shared_ptr<const Context> context_;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkDescriptorSet set_ = VK_NULL_HANDLE;
};

// The kernels of one scan algorithm, or without one (nullopt) the copy kernel that the
// benchmark measures scans against (with the library's shapes; the options' shape and
// look-back knobs apply to scans only, so that a sweep of them does not move the baseline).
class ScanKernels {
 public:
  ScanKernels(std::shared_ptr<const Context> context, std::shared_ptr<PipelineCache> pipelines,
              DType dtype, Op op, Kind kind, std::optional<Algorithm> algorithm,
              const testing::Options& options);

  // The most elements one run may take on this device.
  std::size_t max_elements() const;
  // Bytes of one spine half that a run on n elements uses, and the most any run on at most
  // max_n elements uses (a small input may take smaller tiles, so more of them).
  std::size_t spine_bytes(std::size_t n) const;
  std::size_t spine_bytes_up_to(std::size_t max_n) const;
  static constexpr std::size_t control_bytes = GS_CONTROL_WORDS * sizeof(std::uint32_t);

  // Records one run on n >= 1 elements: a chained scan takes the spine's next half and
  // resets the control words where its kernel uses them; then the dispatches. Inputs must
  // be visible to compute.
  void record(VkCommandBuffer cmd, const ScanBuffers& buffers, VkDescriptorSet set, std::size_t n,
              Value init, const RowLayout* rows = nullptr) const;
  // Records one run on n >= 1 elements into a command buffer that may be submitted any
  // number of times: the spine (spine_bytes(n)) and the control words are zeroed by the
  // run itself, behind a barrier that also orders it after an earlier run on the same
  // workspace. The pipelines must take pushed descriptors. `rows`: a batched or segmented
  // run's layout (its first_row counts from out_shift).
  void record_resubmittable(VkCommandBuffer cmd, const PushedBuffers& buffers, std::size_t n,
                            Value init, const RowLayout* rows = nullptr) const;
  // Records the device-side check of a finished run; mismatches are added to the control
  // buffer's GS_CONTROL_VALIDATION_ERRORS word. Kind::reduce is checked on the host. For
  // float sums `tolerance` bounds |x| times 1e-5, for float products the relative rounding
  // per element (see validate.comp). row_length: a batched run's rows (0: none).
  void record_validation(VkCommandBuffer cmd, VkDescriptorSet set, std::size_t n, Value init,
                         float tolerance = 0, std::uint32_t row_length = 0) const;

  // The tile shape of large inputs; shape_for(n, rows), that of a run on n elements (a
  // batched run's with `rows`).
  const TileShape& shape() const { return shape_; }
  const TileShape& shape_for(std::size_t n, bool rows = false) const;
  // Whether runs count look-back statistics (the statistics variant of a chained scan).
  bool counts_statistics() const {
    return spec_[GS_SPEC_STATISTICS] && shader_.starts_with("chained_scan");
  }

 private:
  // How a run lays out its tiles: over the whole run (plain), segmented by uniform rows or
  // by a list of segments (row_scan.glsl), or on row-aligned tiles (aligned_tiles.glsl).
  enum class RunTiles { plain, rows, segments, aligned_rows };
  // A run's layout: row-aligned where a batched run qualifies (docs/protocol.md,
  // "Row-aligned tiles"; not with element offsets, whose accesses are not 16-byte vectors).
  RunTiles run_tiles(std::size_t n, const RowLayout* rows, bool element_offsets) const;
  // How a run's buffers reach its dispatches: a bound descriptor set, or pushed descriptors.
  struct Binding {
    VkDescriptorSet set = VK_NULL_HANDLE;
    const PushedBuffers* pushed = nullptr;
  };
  // csdldf or csdl: a tile chain with a spine and control words to reset.
  bool chained() const {
    return kernel_ == Kernel::chained_fallback || kernel_ == Kernel::chained_lookback;
  }
  void dispatch(VkCommandBuffer cmd, const Binding& binding, VkPipeline pipeline,
                const PushConstants& push, std::uint32_t groups) const;
  // The dispatches of one run whose spine half and control words are ready.
  void record_dispatches(VkCommandBuffer cmd, const Binding& binding, std::size_t n,
                         const PushConstants& push, bool element_offsets = false,
                         RunTiles tiles = RunTiles::plain) const;
  // The push constants of a run of n elements on `tiles`; a batched or segmented run's
  // `rows` fields too (out_shift: added to).
  PushConstants push_constants(std::size_t n, Value init, RunTiles tiles = RunTiles::plain,
                               const RowLayout* rows = nullptr) const;
  SpecConstants spec_for(std::size_t n, bool rows = false) const;

  std::shared_ptr<const Context> context_;
  std::shared_ptr<PipelineCache> pipelines_;
  enum class Kernel { chained_fallback, chained_lookback, reduce_then_scan, copy };

  DType dtype_;
  Kernel kernel_;
  const detail::ScanPolicy& policy_;
  TileShape shape_;
  std::optional<TileShape> small_shape_;  // for inputs below small_below_bytes_
  std::optional<TileShape> rows_shape_;   // for batched runs
  std::size_t small_below_bytes_;
  std::uint32_t blocking_mask_;
  std::optional<bool> round_rows_;  // the options' choice for row-aligned runs, else the policy's
  std::string shader_;
  std::string aligned_shader_;  // the chained scan's on row-aligned tiles (RunTiles)
  SpecConstants spec_{};
  std::size_t spine_word_bytes_ = sizeof(std::uint32_t);  // 8 for the packed tile state
  bool resets_control_ = false;
};

}  // namespace gpuscan::vulkan
