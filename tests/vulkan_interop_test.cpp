// Scans recorded into an application's own command buffers (gpuscan/vulkan.hpp): plain
// scans. The test is the application (vulkan_app.hpp); vulkan_interop_rows_test.cpp records
// batched and segmented scans.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gpuscan/gpuscan.hpp"
#include "gpuscan/vulkan.hpp"
#include "output_check.hpp"
#include "seed.hpp"
#include "vulkan_app.hpp"

namespace gpuscan::testing {
namespace {

// One plan's buffers: input, output (poisoned before each run) and workspace.
struct Buffers {
  Buffers(App& app, const ScanSpec& spec, std::uint64_t n, VkDeviceSize workspace_bytes,
          VkDeviceSize in_offset = 0)
      : app_(app),
        element_(size_of(spec.dtype)),
        in(app.make_buffer(in_offset + n * element_)),
        out(app.make_buffer(output_elements(spec, n) * element_)),
        workspace(app.make_buffer(workspace_bytes)),
        in_offset_(in_offset),
        n_(n),
        out_n_(output_elements(spec, n)) {}
  ~Buffers() {
    app_.free_buffer(in);
    app_.free_buffer(out);
    app_.free_buffer(workspace);
  }
  vulkan::BufferRange in_range() const { return {in.buffer, in_offset_, n_ * element_}; }
  vulkan::BufferRange out_range() const { return {out.buffer, 0, out_n_ * element_}; }
  vulkan::BufferRange workspace_range() const { return {workspace.buffer, 0, workspace.size}; }
  void fill(std::span<const std::byte> input) {
    std::memcpy(in.mapped + in_offset_, input.data(), input.size());
    std::memset(out.mapped, 0xA5, out_n_ * element_);  // poison
  }
  std::span<const std::byte> output() const { return {out.mapped, out_n_ * element_}; }

  App& app_;
  std::size_t element_;
  AppBuffer in, out, workspace;
  VkDeviceSize in_offset_;
  std::uint64_t n_, out_n_;
};

// Records one scan, then submits the same command buffer `submissions` times, each time on
// new random input, checking every output element.
void expect_resubmissions_exact(App& app, const ScanSpec& spec, std::uint64_t n,
                                std::optional<Value> init, int submissions) {
  const vulkan::Plan plan(app.handles, spec);
  Buffers buffers(app, spec, n, plan.workspace_bytes(n));
  VkCommandPool pool = app.make_pool();
  VkCommandBuffer cmd = app.begin(pool);
  plan.record(cmd, buffers.in_range(), buffers.out_range(), n, buffers.workspace_range(), init);
  app.end(cmd);
  for (int s = 0; s < submissions; ++s) {
    const std::uint64_t seed = next_seed();
    SCOPED_TRACE(describe(spec) + " n=" + std::to_string(n) + " submission " + std::to_string(s) +
                 " seed=" + std::to_string(seed));
    const auto input = reference::random_input(spec.dtype, spec.op, n, seed);
    buffers.fill(input);
    app.submit_and_wait(cmd);
    check_output(spec, input, n, init, buffers.output());
  }
  vkDestroyCommandPool(app.device, pool, nullptr);
}

TEST_F(VulkanRecord, RecordedOnceSubmittedFiveTimesStaysExact) {
  for (Algorithm algorithm : {Algorithm::csdldf, Algorithm::rts}) {
    for (Kind kind : {Kind::inclusive, Kind::exclusive, Kind::reduce}) {
      for (std::uint64_t n : {1ull, 4097ull, 300001ull}) {
        expect_resubmissions_exact(app, {DType::u32, Op::add, kind, algorithm}, n, {}, 5);
      }
    }
  }
}

TEST_F(VulkanRecord, EveryTypeWithInit) {
  for (DType dtype : {DType::u32, DType::i32, DType::f32, DType::u64, DType::i64, DType::f64}) {
    for (Op op : {Op::add, Op::max}) {
      const Value init = reference::visit(dtype, [](auto t) { return Value::of(decltype(t)(3)); });
      expect_resubmissions_exact(app, {dtype, op, Kind::exclusive}, 100003, init, 2);
    }
  }
}

TEST_F(VulkanRecord, SeveralScansInOneCommandBufferOnOneWorkspace) {
  // Two scans on one workspace, one after the other in one command buffer: the second orders
  // itself after the first's use of the workspace.
  const ScanSpec spec{DType::u32, Op::add, Kind::inclusive};
  const vulkan::Plan plan(app.handles, spec);
  const std::uint64_t n = 70000;
  Buffers a(app, spec, n, plan.workspace_bytes(n)), b(app, spec, n, 16);
  VkCommandPool pool = app.make_pool();
  VkCommandBuffer cmd = app.begin(pool);
  plan.record(cmd, a.in_range(), a.out_range(), n, a.workspace_range());
  plan.record(cmd, b.in_range(), b.out_range(), n, a.workspace_range());
  app.end(cmd);
  for (int s = 0; s < 3; ++s) {
    const std::uint64_t seed = next_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const auto x = reference::random_input(spec.dtype, spec.op, n, seed);
    const auto y = reference::random_input(spec.dtype, spec.op, n, seed + 1);
    a.fill(x);
    b.fill(y);
    app.submit_and_wait(cmd);
    check_output(spec, x, n, {}, a.output());
    check_output(spec, y, n, {}, b.output());
  }
  vkDestroyCommandPool(app.device, pool, nullptr);
}

TEST_F(VulkanRecord, OffsetsAlignedOnlyToTheElementSize) {
  // Data that starts one element past a binding-aligned offset (DESIGN 3a: any alignment
  // the element type allows), in every kind, resubmitted.
  for (DType dtype : {DType::u32, DType::f64}) {
    for (Kind kind : {Kind::inclusive, Kind::exclusive, Kind::reduce}) {
      const ScanSpec spec{dtype, Op::add, kind};
      const std::size_t element = size_of(dtype);
      const std::uint64_t n = 50001;
      const vulkan::Plan plan(app.handles, spec);
      // Room for n + 3 elements in both (a reduction's one output lands at element 3 too).
      Buffers buffers(app, {dtype, Op::add, Kind::inclusive}, n + 3, plan.workspace_bytes(n),
                      element);
      VkCommandPool pool = app.make_pool();
      VkCommandBuffer cmd = app.begin(pool);
      // in from element 1 of the buffer, out from element 3.
      const vulkan::BufferRange in{buffers.in.buffer, element, n * element};
      const vulkan::BufferRange out{buffers.out.buffer, 3 * element,
                                    output_elements(spec, n) * element};
      plan.record(cmd, in, out, n, buffers.workspace_range());
      app.end(cmd);
      for (int s = 0; s < 2; ++s) {
        const std::uint64_t seed = next_seed();
        SCOPED_TRACE(describe(spec) + " seed=" + std::to_string(seed));
        const auto input = reference::random_input(dtype, spec.op, n, seed);
        buffers.fill({});
        std::memcpy(buffers.in.mapped + element, input.data(), input.size());
        std::memset(buffers.out.mapped, 0xA5, buffers.out.size);
        app.submit_and_wait(cmd);
        check_output(spec, input, n, {},
                     {buffers.out.mapped + 3 * element, output_elements(spec, n) * element});
        // Nothing outside the output range was written.
        for (std::size_t i = 0; i < 3 * element; ++i)
          ASSERT_EQ(buffers.out.mapped[i], std::byte{0xA5}) << "byte " << i;
      }
      vkDestroyCommandPool(app.device, pool, nullptr);
    }
  }
}

TEST_F(VulkanRecord, EmptyInputReducesToInit) {
  const ScanSpec spec{DType::u64, Op::add, Kind::reduce};
  const vulkan::Plan plan(app.handles, spec);
  Buffers buffers(app, spec, 0, plan.workspace_bytes(0));
  VkCommandPool pool = app.make_pool();
  VkCommandBuffer cmd = app.begin(pool);
  plan.record(cmd, {}, buffers.out_range(), 0, {}, Value::of(std::uint64_t{0x123456789ull}));
  // An empty scan records nothing and needs no buffers.
  const vulkan::Plan scan(app.handles, {DType::u64, Op::add, Kind::exclusive});
  scan.record(cmd, {}, {}, 0, {});
  app.end(cmd);
  buffers.fill({});
  app.submit_and_wait(cmd);
  std::uint64_t got = 0;
  std::memcpy(&got, buffers.out.mapped, 8);
  EXPECT_EQ(got, 0x123456789ull);
  vkDestroyCommandPool(app.device, pool, nullptr);
}

TEST_F(VulkanRecord, WorkspaceAtItsLimitWorksAndOneByteShortIsRefused) {
  const ScanSpec spec{DType::f32, Op::add, Kind::inclusive};
  const vulkan::Plan plan(app.handles, spec);
  const std::uint64_t max_n = 123457;
  // Every n up to max_n fits the workspace of max_n, the sizes of small tiles included.
  for (std::uint64_t n : {max_n, max_n / 3, std::uint64_t{5000}, std::uint64_t{1}}) {
    EXPECT_LE(plan.workspace_bytes(n), plan.workspace_bytes(max_n));
  }
  Buffers buffers(app, spec, max_n, plan.workspace_bytes(max_n));
  VkCommandPool pool = app.make_pool();
  VkCommandBuffer cmd = app.begin(pool);
  vulkan::BufferRange short_workspace = buffers.workspace_range();
  short_workspace.size -= 1;
  EXPECT_THROW(plan.record(cmd, buffers.in_range(), buffers.out_range(), max_n, short_workspace),
               UsageError);
  plan.record(cmd, buffers.in_range(), buffers.out_range(), max_n, buffers.workspace_range());
  app.end(cmd);
  const std::uint64_t seed = next_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  const auto input = reference::random_input(spec.dtype, spec.op, max_n, seed);
  buffers.fill(input);
  app.submit_and_wait(cmd);
  check_output(spec, input, max_n, {}, buffers.output());
  vkDestroyCommandPool(app.device, pool, nullptr);
}

TEST_F(VulkanRecord, BadRequestsAreRefused) {
  const ScanSpec spec{DType::u32, Op::add, Kind::inclusive};
  const vulkan::Plan plan(app.handles, spec);
  const std::uint64_t n = 1000;
  Buffers buffers(app, spec, n, plan.workspace_bytes(n));
  VkCommandPool pool = app.make_pool();
  VkCommandBuffer cmd = app.begin(pool);
  const auto in = buffers.in_range(), out = buffers.out_range(), ws = buffers.workspace_range();
  // In place: a fallback would re-read overwritten input.
  EXPECT_THROW(plan.record(cmd, in, in, n, ws), UsageError);
  EXPECT_THROW(plan.record(cmd, in, out, n, {in.buffer, 0, ws.size}), UsageError);
  EXPECT_THROW(plan.record(cmd, in, out, n + 1, ws), UsageError);  // larger than `in`
  EXPECT_THROW(plan.record(cmd, in, {out.buffer, 0, VK_WHOLE_SIZE}, n, ws), UsageError);
  EXPECT_THROW(plan.record(cmd, in, out, std::uint64_t{1} << 62, ws), UsageError);
  EXPECT_THROW(plan.record(VK_NULL_HANDLE, in, out, n, ws), UsageError);
  EXPECT_THROW(plan.record(cmd, in, out, n, ws, Value::of(1.5f)), UsageError);
  EXPECT_THROW(plan.record(cmd, {in.buffer, 2, in.size - 4}, out, n - 1, ws), UsageError);
  EXPECT_THROW(plan.record(cmd, in, out, n, {ws.buffer, 4, ws.size - 4}), UsageError);
  EXPECT_THROW(vulkan::Plan(app.handles, {DType::f32, Op::bit_xor, Kind::inclusive}), UsageError);
  {
    // A device made without the push-descriptor extension is refused, not crashed on.
    const float priority = 1;
    VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueFamilyIndex = app.family;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    info.pNext = &app.requirements->features;
    info.queueCreateInfoCount = 1;
    info.pQueueCreateInfos = &queue_info;
    VkDevice bare = VK_NULL_HANDLE;
    ASSERT_EQ(vkCreateDevice(app.handles.physical_device, &info, nullptr, &bare), VK_SUCCESS);
    vulkan::DeviceHandles handles = app.handles;
    handles.device = bare;
    EXPECT_THROW(vulkan::Plan(handles, {DType::u32, Op::add, Kind::inclusive}), UsageError);
    vkDestroyDevice(bare, nullptr);
  }
  EXPECT_THROW(vulkan::Plan(app.handles, {DType::u32, Op::add, Kind::inclusive, Algorithm::csdl}),
               UsageError);
  app.end(cmd);
  vkDestroyCommandPool(app.device, pool, nullptr);
}

TEST_F(VulkanRecord, FourThreadsRecordThroughOnePlan) {
  // 4 threads x 200 scans through one Plan, each thread with its own pool, buffers and
  // workspace; submissions take turns on the application's queue.
  const ScanSpec spec{DType::u32, Op::add, Kind::inclusive};
  const vulkan::Plan plan(app.handles, spec);
  std::atomic<int> wrong{0}, failed{0};
  const std::uint64_t base_seed = next_seed();
  std::printf("threads' seeds: %llu + thread * 1000 + scan\n",
              static_cast<unsigned long long>(base_seed));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      try {
        VkCommandPool pool = app.make_pool();
        for (int s = 0; s < 200; ++s) {
          const std::uint64_t n = 1000 + static_cast<std::uint64_t>((t * 200 + s) * 37 % 20000);
          Buffers buffers(app, spec, n, plan.workspace_bytes(n));
          const auto input = reference::random_input(
              spec.dtype, spec.op, n, base_seed + static_cast<unsigned>(t * 1000 + s));
          buffers.fill(input);
          VkCommandBuffer cmd = app.begin(pool);
          plan.record(cmd, buffers.in_range(), buffers.out_range(), n, buffers.workspace_range());
          app.end(cmd);
          app.submit_and_wait(cmd);
          const auto expected = reference::scan<std::uint32_t>(
              spec.kind, spec.op,
              std::vector<std::uint32_t>(reinterpret_cast<const std::uint32_t*>(input.data()),
                                         reinterpret_cast<const std::uint32_t*>(input.data()) + n),
              std::nullopt);
          if (std::memcmp(expected.data(), buffers.out.mapped, n * 4) != 0) ++wrong;
          vkFreeCommandBuffers(app.device, pool, 1, &cmd);
        }
        vkDestroyCommandPool(app.device, pool, nullptr);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "thread %d: %s\n", t, e.what());
        ++failed;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0) << "scans with a wrong output, of 800";
}

}  // namespace
}  // namespace gpuscan::testing
