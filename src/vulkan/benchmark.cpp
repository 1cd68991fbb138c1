// VulkanDevice::benchmark: every implementation of a case on one input, each timed run
// bracketed by timestamps, with the output poisoned before and checked on the device after.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include "core/bench_checks.hpp"
#include "core/reference.hpp"
#include "shaders/common/interface.h"
#include "vulkan/scan_kernels.hpp"
#include "vulkan/timestamps.hpp"
#include "vulkan/vulkan_device.hpp"

namespace gpuscan::vulkan {
namespace {

constexpr std::uint32_t poison = 0xDEADBEEFu;

// Writing a buffer larger than the last-level cache between runs evicts the input, so
// each run starts cold, as a scan inside a real pipeline would.
std::size_t flush_bytes(const DeviceInfo& info) {
  return info.is_cpu() ? std::size_t{32} << 20 : std::size_t{512} << 20;
}

void transfer_to_compute(VkCommandBuffer cmd) {
  memory_barrier(cmd, VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                 VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
                 VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT |
                     VK_ACCESS_2_TRANSFER_READ_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT);
}

void compute_to_all(VkCommandBuffer cmd) {
  memory_barrier(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_WRITE_BIT,
                 VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
                 VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT |
                     VK_ACCESS_2_TRANSFER_READ_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT);
}

// Untimed runs before the timed ones: the first of each builds its pipelines; then, on a
// GPU, runs go on until the device has been busy for a while. A GPU left idle (as it is
// while the host makes and uploads the input) lowers its shader clock, and the NVIDIA
// driver was seen to time whole Vulkan batches at 345 MHz instead of 1980 MHz, which slows
// the latency-bound scans far more than memcpy. (A CUDA context keeps the clocks up.)
void warm_up(const Context& context, const std::vector<std::unique_ptr<ScanKernels>>& kernels,
             const std::vector<ScanBuffers>& buffers,
             const std::vector<std::unique_ptr<BindingSet>>& sets, std::size_t n, Value init) {
  using clock = std::chrono::steady_clock;
  constexpr std::chrono::milliseconds busy_for{300};
  constexpr double batch_seconds = 0.02;  // short enough to stop near busy_for
  const clock::time_point start = clock::now();
  std::size_t repeats = 1;
  for (;;) {
    const clock::time_point before = clock::now();
    context.submit([&](VkCommandBuffer cmd) {
      for (std::size_t r = 0; r < repeats; ++r) {
        for (std::size_t i = 0; i < kernels.size(); ++i) {
          kernels[i]->record(cmd, buffers[i], sets[i]->handle(), n, init);
          compute_to_all(cmd);
        }
      }
    });
    const clock::time_point now = clock::now();
    if (context.info().is_cpu() || now - start >= busy_for) return;
    const double took = std::chrono::duration<double>(now - before).count();
    repeats = std::clamp<std::size_t>(
        static_cast<std::size_t>(static_cast<double>(repeats) * batch_seconds / took), 1, 4096);
  }
}

}  // namespace

std::vector<BenchResult> VulkanDevice::benchmark(const BenchCase& c,
                                                 std::span<const std::byte> input) {
  if (c.warm_code) {
    throw UsageError(
        "warm-code benchmark runs are CUDA's; Vulkan runs start cold (flushed) or hot");
  }
  const std::size_t element = size_of(c.dtype);
  const std::size_t runs = static_cast<std::size_t>(c.runs);
  const std::size_t k = c.implementations.size();
  VulkanBuffer in(context_, c.n * element);
  vulkan::upload(context_, in, input);
  VulkanBuffer out(context_, c.n * element);  // memcpy writes n even for a reduction
  VulkanBuffer control(context_, ScanKernels::control_bytes);
  std::unique_ptr<VulkanBuffer> flush;
  if (!c.hot) flush = std::make_unique<VulkanBuffer>(context_, flush_bytes(info()));
  const Value init = reference::identity_value(c.dtype, c.op);
  const detail::InputFacts facts = detail::input_facts(c, input);

  // Every implementation with its kernels, spine and bindings.
  std::vector<std::unique_ptr<ScanKernels>> kernels;
  std::vector<std::unique_ptr<SpineBuffer>> spines;
  std::vector<ScanBuffers> buffers;
  std::vector<std::unique_ptr<BindingSet>> sets;
  for (const Implementation implementation : c.implementations) {
    kernels.push_back(std::make_unique<ScanKernels>(context_, pipelines_, c.dtype, c.op, c.kind,
                                                    implementation, c.tuning));
    if (c.n > kernels.back()->max_elements()) {
      throw UsageError(std::to_string(c.n) + " elements are more than one run takes on " +
                       info().name + " (at most " + std::to_string(kernels.back()->max_elements()) +
                       ")");
    }
    spines.push_back(std::make_unique<SpineBuffer>(context_, kernels.back()->spine_bytes(c.n)));
    buffers.push_back(ScanBuffers{in, out, *spines.back(), control});
    sets.push_back(
        std::make_unique<BindingSet>(context_, pipelines_->set_layout(), buffers.back()));
  }

  warm_up(*context_, kernels, buffers, sets, c.n, init);

  // The timed runs go round the implementations (run r of each, then run r + 1), so that a
  // slow spell of the device hits them alike. Each run: poison the output, flush the cache,
  // time the scan alone, check it on the device, keep its counts and first output.
  constexpr std::size_t counts = sizeof(RunCounts);
  const std::size_t slots = runs * k;
  VulkanBuffer checks(context_, slots * (counts + element), VulkanBuffer::Memory::staging);
  const Timestamps timestamps(context_, static_cast<std::uint32_t>(slots));
  context_->submit([&](VkCommandBuffer cmd) {
    timestamps.reset(cmd);
    vkCmdFillBuffer(cmd, control.handle(), 0, VK_WHOLE_SIZE, 0);
    for (std::uint32_t slot = 0; slot < slots; ++slot) {
      const std::size_t i = slot % k;
      vkCmdFillBuffer(cmd, out.handle(), 0, VK_WHOLE_SIZE, poison);
      vkCmdFillBuffer(cmd, control.handle(), 0, GS_CONTROL_RUN_WORDS * 4,
                      0);  // counts of the last run
      if (flush) vkCmdFillBuffer(cmd, flush->handle(), 0, VK_WHOLE_SIZE, slot);
      transfer_to_compute(cmd);
      timestamps.begin(cmd, slot);
      kernels[i]->record(cmd, buffers[i], sets[i]->handle(), c.n, init);
      timestamps.end(cmd, slot);
      compute_to_all(cmd);
      kernels[i]->record_validation(cmd, sets[i]->handle(), c.n, init, facts.tolerance);
      compute_to_all(cmd);
      const VkBufferCopy run_counts{RunCounts::offset, slot * counts, counts};
      vkCmdCopyBuffer(cmd, control.handle(), checks.handle(), 1, &run_counts);
      const VkBufferCopy first{0, slots * counts + slot * element, element};
      vkCmdCopyBuffer(cmd, out.handle(), checks.handle(), 1, &first);
      vkCmdFillBuffer(cmd, control.handle(), GS_CONTROL_VALIDATION_ERRORS * 4, 4, 0);
      transfer_to_compute(cmd);
    }
  });

  const std::vector<double> ms = timestamps.milliseconds();
  std::vector<BenchResult> results;
  for (std::size_t i = 0; i < k; ++i) {
    BenchResult result{c.implementations[i], {}, 0, 0, {}};
    for (std::size_t slot = i; slot < slots; slot += k) {
      result.ms.push_back(ms[slot]);
      RunCounts run_counts;
      std::memcpy(&run_counts, checks.mapped() + slot * counts, counts);
      const std::byte* first = checks.mapped() + slots * counts + slot * element;
      detail::count_run(result, c, facts, run_counts.abandoned, run_counts.validation_errors,
                        first);
      if (kernels[i]->counts_statistics()) result.statistics.push_back(run_counts.statistics());
    }
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace gpuscan::vulkan
