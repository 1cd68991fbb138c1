// VulkanDevice::benchmark: every implementation of a case on one input, each timed run
// bracketed by timestamps, with the output poisoned before and checked on the device after.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

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
  return info.type == "CPU" ? std::size_t{32} << 20 : std::size_t{512} << 20;
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

// What the checks need to know of the input: the device check's float tolerance, and the
// reduction a Kind::reduce run must produce.
struct InputFacts {
  float tolerance = 0;
  std::function<bool(const std::byte*)> reduction_acceptable;
};

InputFacts input_facts(const BenchCase& c, std::span<const std::byte> input) {
  return reference::visit(c.dtype, [&](auto tag) {
    using T = decltype(tag);
    const std::span<const T> x(reinterpret_cast<const T*>(input.data()), c.n);
    InputFacts facts;
    double max_abs = 0, sum_abs = 0;
    for (const T& v : x) {
      const double a = std::fabs(static_cast<double>(v));
      max_abs = std::max(max_abs, a);
      sum_abs += a;
    }
    if (is_float(c.dtype)) {
      if (c.op == Op::add) facts.tolerance = static_cast<float>(1e-5 * max_abs);
      if (c.op == Op::mul)
        facts.tolerance = static_cast<float>(4.0 * std::numeric_limits<T>::epsilon());
    }
    double want = 0;
    if (c.kind == Kind::reduce) {
      if constexpr (std::is_floating_point_v<T>) {
        const std::vector<double> wide(x.begin(), x.end());
        want = c.op == Op::min || c.op == Op::max
                   ? static_cast<double>(reference::scan(Kind::reduce, c.op, x)[0])
                   : reference::scan<double>(Kind::reduce, c.op, wide)[0];
      } else {
        want = static_cast<double>(reference::scan(Kind::reduce, c.op, x)[0]);
        // Integers compare exactly, as bits (doubles cannot hold every 64-bit value).
        const T exact = reference::scan(Kind::reduce, c.op, x)[0];
        facts.reduction_acceptable = [exact](const std::byte* got) {
          return std::memcmp(got, &exact, sizeof(T)) == 0;
        };
        return facts;
      }
    }
    const Op op = c.op;
    const std::size_t n = c.n;
    facts.reduction_acceptable = [=](const std::byte* got) {
      T value;
      std::memcpy(&value, got, sizeof(T));
      return reference::within_tolerance<T>(op, value, want, sum_abs, n);
    };
    return facts;
  });
}

}  // namespace

std::vector<BenchResult> VulkanDevice::benchmark(const BenchCase& c,
                                                 std::span<const std::byte> input) {
  const std::size_t element = size_of(c.dtype);
  const std::size_t runs = static_cast<std::size_t>(c.runs);
  VulkanBuffer in(context_, c.n * element);
  vulkan::upload(context_, in, input);
  VulkanBuffer out(context_, c.n * element);  // memcpy writes n even for a reduction
  VulkanBuffer control(context_, ScanKernels::control_bytes);
  // Per run: its counts, then its first output.
  constexpr std::size_t counts = sizeof(RunCounts);
  VulkanBuffer checks(context_, runs * (counts + element), VulkanBuffer::Memory::staging);
  std::unique_ptr<VulkanBuffer> flush;
  if (!c.hot) flush = std::make_unique<VulkanBuffer>(context_, flush_bytes(info()));
  const Timestamps timestamps(context_, static_cast<std::uint32_t>(runs));
  const Value init = reference::identity_value(c.dtype, c.op);
  const InputFacts facts = input_facts(c, input);
  std::vector<BenchResult> results;
  for (const Implementation implementation : c.implementations) {
    const ScanKernels kernels(context_, pipelines_, c.dtype, c.op, c.kind, implementation,
                              c.tuning);
    if (c.n > kernels.max_elements()) {
      throw UsageError(std::to_string(c.n) + " elements are more than one run takes on " +
                       info().name);
    }
    const VulkanBuffer spine(context_, kernels.spine_bytes(c.n));
    const ScanBuffers buffers{in, out, spine, control};
    const BindingSet set(context_, pipelines_->set_layout(), buffers);
    const bool checked_on_device =
        c.kind != Kind::reduce || implementation == Implementation::memcpy;

    // One untimed warm-up run builds the pipelines and wakes the device.
    context_->submit(
        [&](VkCommandBuffer cmd) { kernels.record(cmd, buffers, set.handle(), c.n, init); });
    context_->submit([&](VkCommandBuffer cmd) {
      timestamps.reset(cmd);
      vkCmdFillBuffer(cmd, control.handle(), 0, VK_WHOLE_SIZE, 0);
      for (std::uint32_t r = 0; r < runs; ++r) {
        vkCmdFillBuffer(cmd, out.handle(), 0, VK_WHOLE_SIZE, poison);
        if (flush) vkCmdFillBuffer(cmd, flush->handle(), 0, VK_WHOLE_SIZE, r);
        transfer_to_compute(cmd);
        timestamps.begin(cmd, r);
        kernels.record(cmd, buffers, set.handle(), c.n, init);
        timestamps.end(cmd, r);
        compute_to_all(cmd);
        kernels.record_validation(cmd, set.handle(), c.n, init, facts.tolerance);
        compute_to_all(cmd);
        // Keep this run's counts and first output, then clear the error count.
        const VkBufferCopy errors{RunCounts::offset, r * counts, counts};
        vkCmdCopyBuffer(cmd, control.handle(), checks.handle(), 1, &errors);
        const VkBufferCopy first{0, runs * counts + r * element, element};
        vkCmdCopyBuffer(cmd, out.handle(), checks.handle(), 1, &first);
        vkCmdFillBuffer(cmd, control.handle(), GS_CONTROL_VALIDATION_ERRORS * 4, 4, 0);
        transfer_to_compute(cmd);
      }
    });

    BenchResult result{implementation, timestamps.milliseconds(), 0, 0, {}};
    for (std::size_t r = 0; r < runs; ++r) {
      RunCounts run_counts;
      std::memcpy(&run_counts, checks.mapped() + r * counts, counts);
      const std::byte* first = checks.mapped() + runs * counts + r * element;
      const bool reduction_right = facts.reduction_acceptable(first);
      if (run_counts.abandoned != 0) {
        ++result.abandoned;
      } else if (run_counts.validation_errors == 0 && (checked_on_device || reduction_right)) {
        ++result.validated;
      }
      if (kernels.counts_statistics()) result.statistics.push_back(run_counts.statistics());
    }
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace gpuscan::vulkan
