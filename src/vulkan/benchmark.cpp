// The Vulkan side of a benchmark (core/bench_target.hpp): the scans' kernels and the memcpy
// kernel, every timed run recorded into one command buffer, bracketed by timestamps, its
// output poisoned before and checked on the device after.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "core/bench_checks.hpp"
#include "core/bench_target.hpp"
#include "core/reference.hpp"
#include "shaders/common/interface.h"
#include "vulkan/bench_support.hpp"
#include "vulkan/scan_kernels.hpp"
#include "vulkan/timestamps.hpp"
#include "vulkan/vulkan_device.hpp"

namespace gpuscan::vulkan {
namespace {

using testing::Implementation;

constexpr std::uint32_t poison = 0xDEADBEEFu;

void transfer_to_compute(const Context& context, VkCommandBuffer cmd) {
  context.barrier(cmd, VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                  VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
                  VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT |
                      VK_ACCESS_2_TRANSFER_READ_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT);
}

void compute_to_all(const Context& context, VkCommandBuffer cmd) {
  context.barrier(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_WRITE_BIT,
                  VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
                  VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT |
                      VK_ACCESS_2_TRANSFER_READ_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT);
}

// One implementation: its kernels, spine and bindings over the case's buffers.
struct Launch {
  std::unique_ptr<ScanKernels> kernels;
  std::unique_ptr<SpineBuffer> spine;
  std::unique_ptr<ScanBuffers> buffers;
  std::unique_ptr<BindingSet> set;
  const RowLayout* rows = nullptr;  // a batched case's scans (not the copy)
};

class VulkanBenchTarget : public detail::BenchTarget {
 public:
  VulkanBenchTarget(std::shared_ptr<Context> context, std::shared_ptr<PipelineCache> pipelines,
                    const testing::BenchCase& c, std::span<const std::byte> input)
      : context_(std::move(context)),
        pipelines_(std::move(pipelines)),
        c_(c),
        element_(size_of(c.dtype)),
        in_(context_, c.n * element_),
        out_(context_, c.n * element_),  // memcpy writes n even for a reduction
        control_(context_, ScanKernels::control_bytes),
        init_(reference::identity_value(c.dtype, c.op)) {
    if (c.warm_code) {
      throw UsageError(
          "warm-code benchmark runs are CUDA's; Vulkan runs start cold (flushed) or hot");
    }
    vulkan::upload(context_, in_, input);
    // A batched case of one row is one scan, as the Scanner runs it.
    if (c.row_length != 0 && c.row_length < c.n) rows_ = row_layout(c.row_length, 0, c.n, init_);
    if (!c.hot) flush_ = std::make_unique<VulkanBuffer>(context_, flush_bytes(context_->info()));
  }

  void add(Implementation implementation) override {
    std::optional<Algorithm> algorithm;
    switch (implementation) {
      case Implementation::cub:
        throw UsageError("cub is the CUDA baseline; it runs with --backend cuda");
      case Implementation::memcpy:
        break;
      case Implementation::csdl:
        algorithm = Algorithm::csdl;
        break;
      case Implementation::rts:
        algorithm = Algorithm::rts;
        break;
      case Implementation::csdldf:
        algorithm = Algorithm::csdldf;
        break;
    }
    Launch launch;
    launch.kernels =
        std::make_unique<ScanKernels>(context_, pipelines_, c_.dtype, c_.op, c_.kind, algorithm,
                                      algorithm ? c_.options : testing::Options{});
    if (c_.n > launch.kernels->max_elements()) {
      throw UsageError(std::to_string(c_.n) + " elements are more than one run takes on " +
                       context_->info().name + " (at most " +
                       std::to_string(launch.kernels->max_elements()) + ")");
    }
    launch.spine = std::make_unique<SpineBuffer>(context_, launch.kernels->spine_bytes(c_.n));
    launch.buffers = std::make_unique<ScanBuffers>(ScanBuffers{in_, out_, *launch.spine, control_});
    launch.set = std::make_unique<BindingSet>(context_, pipelines_->set_layout(), *launch.buffers);
    if (algorithm && rows_) launch.rows = &*rows_;
    launches_.push_back(std::move(launch));
  }

  bool counts_statistics(std::size_t i) const override {
    return launches_[i].kernels->counts_statistics();
  }

  // Untimed runs of every implementation (bench_support.hpp says why).
  void warm_up() override {
    vulkan::warm_up(*context_, [&](VkCommandBuffer cmd) {
      for (const Launch& l : launches_) {
        l.kernels->record(cmd, *l.buffers, l.set->handle(), c_.n, init_, l.rows);
        compute_to_all(*context_, cmd);
      }
    });
  }

  // Every timed run goes into one command buffer. Per slot, a staging buffer receives the
  // run's counts (RunCounts) and, after all counts, its first output element.
  void timed_runs(std::size_t slots, const std::function<void()>& body) override {
    slots_ = slots;
    checks_ = std::make_unique<VulkanBuffer>(context_, slots * (sizeof(RunCounts) + element_),
                                             VulkanBuffer::Memory::staging);
    timestamps_ = std::make_unique<Timestamps>(context_, static_cast<std::uint32_t>(slots));
    context_->submit([&](VkCommandBuffer cmd) {
      cmd_ = cmd;
      timestamps_->reset(cmd);
      context_->vk().vkCmdFillBuffer(cmd, control_.handle(), 0, VK_WHOLE_SIZE, 0);
      transfer_to_compute(*context_, cmd);  // and to the transfers of the first prepare()
      body();
      cmd_ = VK_NULL_HANDLE;
    });
    ms_ = timestamps_->milliseconds();
  }

  void prepare(std::size_t slot, std::size_t) override {
    context_->vk().vkCmdFillBuffer(cmd_, out_.handle(), 0, VK_WHOLE_SIZE, poison);
    context_->vk().vkCmdFillBuffer(cmd_, control_.handle(), 0, GS_CONTROL_RUN_WORDS * 4, 0);
    if (flush_) {
      context_->vk().vkCmdFillBuffer(cmd_, flush_->handle(), 0, VK_WHOLE_SIZE,
                                     static_cast<std::uint32_t>(slot));
    }
    transfer_to_compute(*context_, cmd_);
  }

  void run(std::size_t slot, std::size_t i) override {
    const Launch& l = launches_[i];
    timestamps_->begin(cmd_, static_cast<std::uint32_t>(slot));
    l.kernels->record(cmd_, *l.buffers, l.set->handle(), c_.n, init_, l.rows);
    timestamps_->end(cmd_, static_cast<std::uint32_t>(slot));
    compute_to_all(*context_, cmd_);
  }

  void verify(std::size_t slot, std::size_t i, float tolerance) override {
    const Launch& l = launches_[i];
    l.kernels->record_validation(cmd_, l.set->handle(), c_.n, init_, tolerance,
                                 l.rows ? l.rows->length : 0);
    compute_to_all(*context_, cmd_);
    constexpr std::size_t counts = sizeof(RunCounts);
    const VkBufferCopy run_counts{RunCounts::offset, slot * counts, counts};
    context_->vk().vkCmdCopyBuffer(cmd_, control_.handle(), checks_->handle(), 1, &run_counts);
    const VkBufferCopy first{0, slots_ * counts + slot * element_, element_};
    context_->vk().vkCmdCopyBuffer(cmd_, out_.handle(), checks_->handle(), 1, &first);
    // Transfer commands are not ordered among themselves: without this, the clear below may
    // zero the error count before the copy above has read it (synchronization validation:
    // WRITE_AFTER_READ), and a run that failed its check would count as validated.
    context_->barrier(cmd_, VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_READ_BIT,
                      VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
    context_->vk().vkCmdFillBuffer(cmd_, control_.handle(), GS_CONTROL_VALIDATION_ERRORS * 4, 4, 0);
    transfer_to_compute(*context_, cmd_);
  }

  Record record(std::size_t slot) const override {
    constexpr std::size_t counts = sizeof(RunCounts);
    RunCounts run_counts;
    std::memcpy(&run_counts, checks_->mapped() + slot * counts, counts);
    Record r;
    r.ms = ms_[slot];
    r.abandoned = run_counts.abandoned;
    r.check_errors = run_counts.validation_errors;
    r.statistics = run_counts.statistics();
    std::memcpy(&r.first, checks_->mapped() + slots_ * counts + slot * element_, element_);
    return r;
  }

 private:
  std::shared_ptr<Context> context_;
  std::shared_ptr<PipelineCache> pipelines_;
  testing::BenchCase c_;
  std::size_t element_;
  VulkanBuffer in_, out_, control_;
  std::unique_ptr<VulkanBuffer> flush_;
  Value init_;
  std::optional<RowLayout> rows_;
  std::vector<Launch> launches_;
  std::size_t slots_ = 0;
  std::unique_ptr<VulkanBuffer> checks_;
  std::unique_ptr<Timestamps> timestamps_;
  std::vector<double> ms_;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;  // while timed_runs records
};

}  // namespace

std::unique_ptr<detail::BenchTarget> VulkanDevice::bench_target(const testing::BenchCase& c,
                                                                std::span<const std::byte> input) {
  return std::make_unique<VulkanBenchTarget>(context_, pipelines_, c, input);
}

}  // namespace gpuscan::vulkan
