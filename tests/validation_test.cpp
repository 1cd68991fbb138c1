// The device-side check that every benchmark run relies on must catch wrong output: a
// correct scan passes, one corrupted element fails it, an unwritten output fails it.
#include <cstring>
#include <vector>

#include "core/reference.hpp"
#include "shaders/common/interface.h"
#include "test_support.hpp"
#include "vulkan/scan_kernels.hpp"

namespace gpuscan::testing {
namespace {

class VulkanValidationKernel : public VulkanTest {
 protected:
  // Scans (or not) n random elements of T, applies `corrupt` to the output, and returns the
  // number of mismatches the validation kernel counts (float sums with the benchmark's
  // tolerance for inputs in [-1, 1)).
  template <class T = std::uint32_t, class Corrupt>
  std::uint32_t mismatches(std::size_t n, bool scan, Corrupt corrupt) {
    const DType dtype = dtype_of<T>();
    auto instance = vulkan::Instance::get();
    const auto devices = instance->devices();
    const char* name = std::getenv("GPUSCAN_TEST_DEVICE");
    auto physical = devices.front();
    for (const auto& d : devices) {
      if (name && d.info.name.find(name) != std::string::npos) physical = d;
    }
    auto context = std::make_shared<vulkan::Context>(instance, physical);
    auto pipelines = std::make_shared<vulkan::PipelineCache>(context);
    const vulkan::ScanKernels kernels(context, pipelines, dtype, Op::add, Kind::inclusive,
                                      Algorithm::csdldf, Options{});
    const std::uint64_t seed = next_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const auto input = reference::random_input(dtype, Op::add, n, seed);
    vulkan::VulkanBuffer in(context, n * sizeof(T)), out(context, n * sizeof(T)),
        control(context, vulkan::ScanKernels::control_bytes);
    vulkan::SpineBuffer spine(context, kernels.spine_bytes(n));
    vulkan::upload(context, in, input);
    const vulkan::ScanBuffers buffers{in, out, spine, control};
    const vulkan::BindingSet set(context, pipelines->set_layout(), buffers);
    const Value init = Value::of(T{0});
    context->submit([&](VkCommandBuffer cmd) {
      context->vk().vkCmdFillBuffer(cmd, out.handle(), 0, VK_WHOLE_SIZE, 0xDEADBEEFu);
      context->vk().vkCmdFillBuffer(cmd, control.handle(), 0, VK_WHOLE_SIZE, 0);
    });
    if (scan)
      context->submit(
          [&](VkCommandBuffer cmd) { kernels.record(cmd, buffers, set.handle(), n, init); });
    std::vector<T> result(n);
    vulkan::download(context, out, std::as_writable_bytes(std::span(result)));
    corrupt(result);
    vulkan::upload(context, out, std::as_bytes(std::span(result)));
    context->submit(
        [&](VkCommandBuffer cmd) { kernels.record_validation(cmd, set.handle(), n, init, 1e-5f); });
    std::uint32_t errors = 0;
    vulkan::download(context, control, std::as_writable_bytes(std::span(&errors, 1)),
                     GS_CONTROL_VALIDATION_ERRORS * 4);
    return errors;
  }
};

TEST_F(VulkanValidationKernel, CorrectScanPasses) {
  EXPECT_EQ(mismatches(100003, true, [](auto&) {}), 0u);
}

TEST_F(VulkanValidationKernel, OneCorruptedElementIsCaughtTwice) {
  // out[i] is wrong against out[i-1], and out[i+1] against out[i].
  EXPECT_EQ(mismatches(100003, true, [](auto& out) { out[5000] += 1; }), 2u);
  EXPECT_EQ(mismatches(100003, true, [](auto& out) { out.back() ^= 1u << 31; }), 1u);
}

// Float sums pass within the tolerance and fail outside it.
TEST_F(VulkanValidationKernel, FloatSumsWithinToleranceOnly) {
  EXPECT_EQ(mismatches<float>(100003, true, [](auto&) {}), 0u);
  EXPECT_EQ(mismatches<double>(100003, true, [](auto&) {}), 0u);
  EXPECT_EQ(mismatches<float>(100003, true, [](auto& out) { out[70] += 0.25f; }), 2u);
  EXPECT_EQ(mismatches<double>(100003, true, [](auto& out) { out[0] = -out[0] - 1.0; }), 2u);
}

TEST_F(VulkanValidationKernel, UnwrittenOutputIsCaught) {
  EXPECT_EQ(mismatches(4099, false, [](auto&) {}), 4099u);
}

}  // namespace
}  // namespace gpuscan::testing
