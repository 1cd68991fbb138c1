// Scans recorded into an application's own command buffers (gpuscan/vulkan.hpp). This test
// is the application: it links the Vulkan loader itself and calls vk* through the loader's
// own symbols, as an engine would, while linking gpuscan statically (whose Vulkan symbols
// must not clash with them). It makes its own instance (with the validation layers when
// GPUSCAN_VALIDATION=1, counting their messages), device, buffers and command buffers.
#include <vulkan/vulkan.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpuscan/gpuscan.hpp"
#include "gpuscan/vulkan.hpp"
#include "output_check.hpp"
#include "seed.hpp"

namespace gpuscan::testing {
namespace {

std::atomic<int> validation_messages{0};

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                          VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  ++validation_messages;
  std::fprintf(stderr, "application: Vulkan validation: %s\n", data->pMessage);
  return VK_FALSE;
}

void vk_check(VkResult result, const char* what) {
  if (result != VK_SUCCESS) throw std::runtime_error(std::string(what) + " failed");
}

// A host-visible buffer of the application's (mapped; correctness, not speed).
struct AppBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  std::byte* mapped = nullptr;
  VkDeviceSize size = 0;
};

// The application: one instance, device and compute queue for the whole test program.
class App {
 public:
  static App& get() {
    static App* app = new App();  // never destroyed: see ~App's absence in the notes below
    return *app;
  }

  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  std::uint32_t family = 0;
  std::string name;
  std::unique_ptr<vulkan::DeviceRequirements> requirements;
  vulkan::DeviceHandles handles;
  VkPhysicalDeviceLimits limits{};
  std::mutex queue_mutex;  // a VkQueue needs external synchronisation

  AppBuffer make_buffer(VkDeviceSize size) {
    AppBuffer b;
    b.size = size;
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = std::max<VkDeviceSize>(size, 16);
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                 VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    vk_check(vkCreateBuffer(device, &info, nullptr, &b.buffer), "vkCreateBuffer");
    VkMemoryRequirements needs;
    vkGetBufferMemoryRequirements(device, b.buffer, &needs);
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = needs.size;
    alloc.memoryTypeIndex = host_visible_type(needs.memoryTypeBits);
    vk_check(vkAllocateMemory(device, &alloc, nullptr, &b.memory), "vkAllocateMemory");
    vk_check(vkBindBufferMemory(device, b.buffer, b.memory, 0), "vkBindBufferMemory");
    void* p = nullptr;
    vk_check(vkMapMemory(device, b.memory, 0, VK_WHOLE_SIZE, 0, &p), "vkMapMemory");
    b.mapped = static_cast<std::byte*>(p);
    return b;
  }
  void free_buffer(AppBuffer& b) {
    vkDestroyBuffer(device, b.buffer, nullptr);
    vkFreeMemory(device, b.memory, nullptr);
    b = {};
  }

  // A command pool of the caller's (command pools are not shared between threads).
  VkCommandPool make_pool() {
    VkCommandPoolCreateInfo info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    info.queueFamilyIndex = family;
    info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    VkCommandPool pool = VK_NULL_HANDLE;
    vk_check(vkCreateCommandPool(device, &info, nullptr, &pool), "vkCreateCommandPool");
    return pool;
  }
  VkCommandBuffer begin(VkCommandPool pool) {
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = pool;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    vk_check(vkAllocateCommandBuffers(device, &alloc, &cmd), "vkAllocateCommandBuffers");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vk_check(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
    // The host wrote the inputs through the mapping: visible to the scans.
    barrier(cmd, VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_WRITE_BIT,
            VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_READ_BIT);
    return cmd;
  }
  void end(VkCommandBuffer cmd) {
    // The application's side of the barrier contract: the scans' outputs to the host.
    barrier(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
            VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
    vk_check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
  }
  void submit_and_wait(VkCommandBuffer cmd) {
    VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence = VK_NULL_HANDLE;
    vk_check(vkCreateFence(device, &fence_info, nullptr, &fence), "vkCreateFence");
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    {
      const std::lock_guard lock(queue_mutex);
      vk_check(vkQueueSubmit(queue, 1, &submit, fence), "vkQueueSubmit");
    }
    vk_check(vkWaitForFences(device, 1, &fence, VK_TRUE, 120'000'000'000ull), "vkWaitForFences");
    vkDestroyFence(device, fence, nullptr);
  }
  static void barrier(VkCommandBuffer cmd, VkPipelineStageFlags2 src_stage,
                      VkAccessFlags2 src_access, VkPipelineStageFlags2 dst_stage,
                      VkAccessFlags2 dst_access) {
    VkMemoryBarrier2 b{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
    b.srcStageMask = src_stage;
    b.srcAccessMask = src_access;
    b.dstStageMask = dst_stage;
    b.dstAccessMask = dst_access;
    VkDependencyInfo dependency{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    dependency.memoryBarrierCount = 1;
    dependency.pMemoryBarriers = &b;
    vkCmdPipelineBarrier2(cmd, &dependency);
  }

 private:
  App() {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "gpuscan_vulkan_interop_tests";
    app.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    info.pApplicationInfo = &app;
    const char* layer = "VK_LAYER_KHRONOS_validation";
    const char* debug = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkDebugUtilsMessengerCreateInfoEXT messenger{
        VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    messenger.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                            VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
    messenger.pfnUserCallback = on_message;
    const char* validate = std::getenv("GPUSCAN_VALIDATION");
    if (validate != nullptr && std::string(validate) == "1") {
      info.enabledLayerCount = 1;
      info.ppEnabledLayerNames = &layer;
      info.enabledExtensionCount = 1;
      info.ppEnabledExtensionNames = &debug;
      info.pNext = &messenger;
    }
    vk_check(vkCreateInstance(&info, nullptr, &instance_), "vkCreateInstance");

    std::uint32_t count = 0;
    vkEnumeratePhysicalDevices(instance_, &count, nullptr);
    std::vector<VkPhysicalDevice> devices(count);
    vkEnumeratePhysicalDevices(instance_, &count, devices.data());
    // A GPU if there is one, else the CPU driver; GPUSCAN_TEST_DEVICE picks by name.
    const char* wanted = std::getenv("GPUSCAN_TEST_DEVICE");
    int best_rank = 99;
    for (VkPhysicalDevice d : devices) {
      VkPhysicalDeviceProperties p;
      vkGetPhysicalDeviceProperties(d, &p);
      if (p.apiVersion < VK_API_VERSION_1_3) continue;
      if (wanted && std::string(p.deviceName).find(wanted) == std::string::npos) continue;
      const int rank = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU     ? 0
                       : p.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? 1
                                                                                : 2;
      if (rank < best_rank) {
        best_rank = rank;
        physical_ = d;
        name = p.deviceName;
        limits = p.limits;
      }
    }
    if (physical_ == VK_NULL_HANDLE) throw std::runtime_error("no Vulkan 1.3 device");
    std::printf("application's Vulkan device: %s\n", name.c_str());

    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &count, nullptr);
    std::vector<VkQueueFamilyProperties> families(count);
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &count, families.data());
    while (family < count && !(families[family].queueFlags & VK_QUEUE_COMPUTE_BIT)) ++family;

    // What gpuscan needs, used as this application's whole device description.
    requirements = std::make_unique<vulkan::DeviceRequirements>(instance_, physical_);
    const float priority = 1;
    VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueFamilyIndex = family;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    device_info.pNext = &requirements->features;
    device_info.queueCreateInfoCount = 1;
    device_info.pQueueCreateInfos = &queue_info;
    device_info.enabledExtensionCount = static_cast<std::uint32_t>(requirements->extensions.size());
    device_info.ppEnabledExtensionNames = requirements->extensions.data();
    vk_check(vkCreateDevice(physical_, &device_info, nullptr, &device), "vkCreateDevice");
    vkGetDeviceQueue(device, family, 0, &queue);
    vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);
    handles = {instance_, physical_, device, family, &requirements->features};
  }
  // (The device and instance live until the process ends: Plans hold gpuscan's pipelines on
  // the device in statics of the test, and the driver may already be gone at exit.)

  std::uint32_t host_visible_type(std::uint32_t bits) const {
    const VkMemoryPropertyFlags want =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    for (std::uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
      if ((bits & (1u << i)) && (memory_.memoryTypes[i].propertyFlags & want) == want) return i;
    }
    throw std::runtime_error("no host-visible memory");
  }

  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory_{};
};

class VulkanRecord : public ::testing::Test {
 protected:
  void SetUp() override { before_ = validation_messages.load(); }
  void TearDown() override {
    EXPECT_EQ(validation_messages.load(), before_) << "Vulkan validation messages";
  }
  App& app = App::get();

 private:
  int before_ = 0;
};

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
