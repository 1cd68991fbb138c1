// The Vulkan side of the compaction benchmark (gpuscan/compaction_bench.hpp): the compaction
// kernel and the memcpy kernel on the same input, every timed run in one command buffer,
// bracketed by timestamps, after a poison fill of the output and a cache flush; each
// compaction run's count is copied out and checked, and the last run's output is compared
// in full on the host.
// With GPUSCAN_BENCH_IN_PLACE=1, also in place (core/in_place_bench.hpp).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/in_place_bench.hpp"
#include "core/reference.hpp"
#include "gpuscan/error.hpp"
#include "shaders/common/interface.h"
#include "vulkan/bench_support.hpp"
#include "vulkan/compaction_kernels.hpp"
#include "vulkan/timestamps.hpp"
#include "vulkan/vulkan_device.hpp"

namespace gpuscan::vulkan {
namespace {

constexpr std::uint32_t poison = 0xDEADBEEFu;

void to_everything(const Context& context, VkCommandBuffer cmd) {
  context.barrier(cmd,
                  VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT | VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                  VK_ACCESS_2_TRANSFER_WRITE_BIT | VK_ACCESS_2_SHADER_WRITE_BIT,
                  VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
                  VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT |
                      VK_ACCESS_2_TRANSFER_READ_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT);
}

// GPUSCAN_BENCH_IN_PLACE: the in-place runs (the third slot of each round in `ms`); `checks`
// holds each in-place run's count and control words, `work` the last run's output.
void report_in_place(const std::shared_ptr<const Context>& context,
                     const testing::CompactionBenchCase& c,
                     const testing::CompactionBenchResult& result, const std::vector<double>& ms,
                     const std::byte* checks, std::uint64_t expected_count,
                     std::span<const std::byte> expected_output, const VulkanBuffer& work,
                     bool statistics) {
  constexpr std::size_t per_run = 8 + sizeof(RunCounts);
  detail::InPlaceRuns runs;
  for (int r = 0; r < c.runs; ++r) {
    runs.ms.push_back(ms[3 * r + 2]);
    std::uint64_t kept = 0;
    RunCounts counts{};
    std::memcpy(&kept, checks + r * per_run, 8);
    std::memcpy(&counts, checks + r * per_run + 8, sizeof(RunCounts));
    if (kept == expected_count && counts.abandoned == 0) ++runs.counts_validated;
    runs.spins += counts.spins;
    runs.steps += counts.lookback_steps;
    runs.fallbacks += counts.fallbacks;
    runs.insertions += counts.insertions;
  }
  // The kept elements (select and unique write nothing else).
  std::vector<std::byte> kept_bytes(expected_output.size());
  if (!kept_bytes.empty()) vulkan::download(context, work, kept_bytes);
  runs.output_validated =
      std::memcmp(kept_bytes.data(), expected_output.data(), expected_output.size()) == 0;
  detail::report_in_place(c, result, runs, statistics);
}

}  // namespace

testing::CompactionBenchResult VulkanDevice::benchmark_compaction(
    const testing::CompactionBenchCase& c, std::span<const std::byte> input,
    std::span<const std::byte> flags, std::uint64_t expected_count,
    std::span<const std::byte> expected_output) {
  const std::size_t element = size_of(c.spec.dtype);
  const CompactionKernels compaction(context_, pipelines_, c.spec, c.options);
  const ScanKernels copy(context_, pipelines_, c.spec.dtype, Op::add, Kind::inclusive, std::nullopt,
                         testing::Options{});
  // One run through the bindings: the benchmark never takes the chunked or wide paths, so its
  // outputs (run-length encoding's lengths: 8 bytes an element) must fit one binding too.
  if (c.n > compaction.max_elements() || c.n > copy.max_elements() ||
      !compaction.binding_holds(0, c.n)) {
    throw UsageError(std::to_string(c.n) + " elements are more than one run takes on " +
                     info().name + " (its input and outputs must fit one binding each)");
  }
  VulkanBuffer in(context_, c.n * element), out(context_, c.n * element);
  VulkanBuffer count(context_, 8), control(context_, ScanKernels::control_bytes);
  // The flags (select-flagged, partition-flagged); the second output: the partitions'
  // rejected elements or run-length encoding's lengths.
  const bool rle = c.spec.compaction == Compaction::run_length_encode;
  const bool partition = is_partition(c.spec.compaction);
  const bool flagged = takes_flags(c.spec.compaction);
  std::unique_ptr<VulkanBuffer> flags_buffer, second;
  if (flagged) {
    flags_buffer = std::make_unique<VulkanBuffer>(context_, flags.size());
    vulkan::upload(context_, *flags_buffer, flags);
  }
  if (partition || rle)
    second = std::make_unique<VulkanBuffer>(context_, c.n * (rle ? 8 : element));
  vulkan::upload(context_, in, input);
  std::unique_ptr<VulkanBuffer> flush;
  if (!c.hot) flush = std::make_unique<VulkanBuffer>(context_, flush_bytes(info()));
  SpineBuffer spine(context_, compaction.spine_bytes(c.n, false));
  SpineBuffer copy_spine(context_, 8);
  // One run, no chunks: the carry is never read or written; the control words stand in.
  const CompactionBuffers buffers{in,      out,    flags_buffer.get(), second.get(), count, spine,
                                  control, control};
  const CompactionBindingSet set(context_, pipelines_->set_layout(), buffers, element,
                                 size_of(c.spec.flags_dtype));
  // In place: a work buffer of its own (the input restored into it before each run), and its
  // own count, control words and spine.
  const bool in_place = detail::bench_times_in_place(c.spec.compaction);
  std::unique_ptr<VulkanBuffer> work, work_count, work_control;
  std::unique_ptr<SpineBuffer> work_spine;
  std::unique_ptr<CompactionBuffers> work_buffers;
  std::unique_ptr<CompactionBindingSet> work_set;
  if (in_place) {
    work = std::make_unique<VulkanBuffer>(context_, c.n * element);
    work_count = std::make_unique<VulkanBuffer>(context_, 8);
    work_control = std::make_unique<VulkanBuffer>(context_, ScanKernels::control_bytes);
    work_spine = std::make_unique<SpineBuffer>(context_, compaction.spine_bytes(c.n, true));
    work_buffers = std::make_unique<CompactionBuffers>(
        CompactionBuffers{*work, *work, flags_buffer.get(), second.get(), *work_count, *work_spine,
                          *work_control, *work_control});
    work_set = std::make_unique<CompactionBindingSet>(
        context_, pipelines_->set_layout(), *work_buffers, element, size_of(c.spec.flags_dtype));
  }
  const auto restore_work = [&](VkCommandBuffer cmd) {
    to_everything(*context_, cmd);
    const VkBufferCopy whole{0, 0, c.n * element};
    context_->vk().vkCmdCopyBuffer(cmd, in.handle(), work->handle(), 1, &whole);
    to_everything(*context_, cmd);
  };
  const ScanBuffers copy_buffers{in, out, copy_spine, control};
  const BindingSet copy_set(context_, pipelines_->set_layout(), copy_buffers);

  // Untimed runs first (bench_support.hpp says why: without them, an H100 ran memcpy at
  // 1.6 TB/s in some sweeps and 2.9 TB/s in others).
  warm_up(*context_, [&](VkCommandBuffer cmd) {
    compaction.record(cmd, buffers, set.handle(), c.n, c.constant, false);
    to_everything(*context_, cmd);
    copy.record(cmd, copy_buffers, copy_set.handle(), c.n, Value{c.spec.dtype, 0});
    to_everything(*context_, cmd);
    if (in_place) {
      restore_work(cmd);
      compaction.record(cmd, *work_buffers, work_set->handle(), c.n, c.constant, true);
      to_everything(*context_, cmd);
    }
  });

  // Slots a round: memcpy, the compaction, and in place if asked.
  const int per_round = in_place ? 3 : 2;
  const std::uint32_t slots = static_cast<std::uint32_t>(per_round * c.runs);
  Timestamps timestamps(context_, slots);
  // Per compaction run: its count, then its control words (RunCounts); in place after them.
  constexpr std::size_t per_run = 8 + sizeof(RunCounts);
  VulkanBuffer checks(context_, c.runs * per_run * (in_place ? 2 : 1),
                      VulkanBuffer::Memory::staging);
  context_->submit([&](VkCommandBuffer cmd) {
    timestamps.reset(cmd);
    const VolkDeviceTable& vk = context_->vk();
    vk.vkCmdFillBuffer(cmd, control.handle(), 0, VK_WHOLE_SIZE, 0);
    if (in_place) vk.vkCmdFillBuffer(cmd, work_control->handle(), 0, VK_WHOLE_SIZE, 0);
    for (int r = 0; r < c.runs; ++r) {
      for (int which = 0; which < per_round; ++which) {
        const std::uint32_t slot = static_cast<std::uint32_t>(per_round * r + which);
        if (which == 2) {  // in place, on the work buffer holding the input again
          restore_work(cmd);
          if (flush) vk.vkCmdFillBuffer(cmd, flush->handle(), 0, VK_WHOLE_SIZE, slot);
          to_everything(*context_, cmd);
          timestamps.begin(cmd, slot);
          compaction.record(cmd, *work_buffers, work_set->handle(), c.n, c.constant, true);
          timestamps.end(cmd, slot);
          to_everything(*context_, cmd);
          const std::size_t at = (c.runs + r) * per_run;
          const VkBufferCopy count_copy{0, at, 8};
          vk.vkCmdCopyBuffer(cmd, work_count->handle(), checks.handle(), 1, &count_copy);
          const VkBufferCopy counts_copy{RunCounts::offset, at + 8, sizeof(RunCounts)};
          vk.vkCmdCopyBuffer(cmd, work_control->handle(), checks.handle(), 1, &counts_copy);
          continue;
        }
        to_everything(*context_, cmd);
        vk.vkCmdFillBuffer(cmd, out.handle(), 0, VK_WHOLE_SIZE, poison);
        if (second) vk.vkCmdFillBuffer(cmd, second->handle(), 0, VK_WHOLE_SIZE, poison);
        if (flush) vk.vkCmdFillBuffer(cmd, flush->handle(), 0, VK_WHOLE_SIZE, slot);
        to_everything(*context_, cmd);
        if (which == 0) {
          timestamps.begin(cmd, slot);
          copy.record(cmd, copy_buffers, copy_set.handle(), c.n, Value{c.spec.dtype, 0});
          timestamps.end(cmd, slot);
          continue;
        }
        // record() zeroes the count and the control words it needs before its dispatch,
        // inside the timed bracket: two small fills, as a caller's run has them.
        timestamps.begin(cmd, slot);
        compaction.record(cmd, buffers, set.handle(), c.n, c.constant, false);
        timestamps.end(cmd, slot);
        to_everything(*context_, cmd);
        const VkBufferCopy count_copy{0, r * per_run, 8};
        vk.vkCmdCopyBuffer(cmd, count.handle(), checks.handle(), 1, &count_copy);
        const VkBufferCopy counts_copy{RunCounts::offset, r * per_run + 8, sizeof(RunCounts)};
        vk.vkCmdCopyBuffer(cmd, control.handle(), checks.handle(), 1, &counts_copy);
      }
    }
  });
  const std::vector<double> ms = timestamps.milliseconds();
  testing::CompactionBenchResult result;
  for (int r = 0; r < c.runs; ++r) {
    result.memcpy_ms.push_back(ms[per_round * r]);
    result.compaction_ms.push_back(ms[per_round * r + 1]);
    std::uint64_t kept = 0;
    RunCounts counts{};
    std::memcpy(&kept, checks.mapped() + r * per_run, 8);
    std::memcpy(&counts, checks.mapped() + r * per_run + 8, sizeof(RunCounts));
    if (kept == expected_count && counts.abandoned == 0) ++result.counts_validated;
    if (compaction.counts_statistics()) result.statistics.push_back(counts.statistics());
  }
  if (in_place) {
    report_in_place(context_, c, result, ms, checks.mapped() + c.runs * per_run, expected_count,
                    expected_output, *work, compaction.counts_statistics());
  }
  // The last run's output in full (partition: the selected, then the rejected; run-length
  // encoding: the values, then the lengths).
  std::vector<std::byte> kept_bytes(expected_output.size());
  const std::size_t selected_bytes = std::min(kept_bytes.size(), expected_count * element);
  if (selected_bytes > 0) {
    vulkan::download(context_, out, std::span(kept_bytes).first(selected_bytes));
  }
  if (second && kept_bytes.size() > selected_bytes) {
    vulkan::download(context_, *second, std::span(kept_bytes).subspan(selected_bytes));
  }
  result.output_validated =
      std::memcmp(kept_bytes.data(), expected_output.data(), expected_output.size()) == 0;
  return result;
}

}  // namespace gpuscan::vulkan
