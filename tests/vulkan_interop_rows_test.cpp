// Batched and segmented scans recorded into an application's own command buffers
// (gpuscan/vulkan.hpp, Plan::record_rows and Plan::record_segments; DESIGN 3f). The test is
// the application (vulkan_app.hpp). Random inputs with printed seeds, outputs poisoned and
// checked element by element against the CPU reference, every command buffer submitted
// more than once. Few pipelines (u32 add in every kind, one f32 and one 64-bit case), since
// each costs a CPU driver a second or two to compile: every dtype and operator is the
// scanner suites' (batched_test.cpp, segmented_test.cpp), which run the same kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/reference.hpp"
#include "gpuscan/vulkan.hpp"
#include "output_check.hpp"
#include "seed.hpp"
#include "vulkan_app.hpp"

namespace gpuscan::testing {
namespace {

constexpr std::byte kPoison{0xA5};

// The buffers of one recorded run. `out` sits `guard` elements into a buffer poisoned
// throughout, so that a write outside the output range shows (aligned_guard(): where a
// binding may start, so that the kernels move whole vectors; 1: an element past it); `offsets`
// (segmented runs) sits one binding alignment into its buffer.
struct RunBuffers {
  RunBuffers(App& app, DType dtype, std::uint64_t n, std::uint64_t outputs,
             VkDeviceSize workspace_bytes, std::uint64_t segments = 0,
             std::uint64_t guard_elements = 0)
      : app_(app),
        element(size_of(dtype)),
        guard(guard_elements),
        out_n(outputs),
        offsets_at(app.limits.minStorageBufferOffsetAlignment),
        in(app.make_buffer(n * element)),
        out(app.make_buffer((outputs + 2 * guard_elements) * element)),
        workspace(app.make_buffer(workspace_bytes)),
        offsets(app.make_buffer(offsets_at + (segments + 1) * sizeof(std::uint32_t))) {}
  ~RunBuffers() {
    for (AppBuffer* b : {&in, &out, &workspace, &offsets}) app_.free_buffer(*b);
  }
  RunBuffers(const RunBuffers&) = delete;
  RunBuffers& operator=(const RunBuffers&) = delete;

  vulkan::BufferRange in_range() const { return {in.buffer, 0, in.size}; }
  vulkan::BufferRange out_range() const { return {out.buffer, guard * element, out_n * element}; }
  vulkan::BufferRange workspace_range() const { return {workspace.buffer, 0, workspace.size}; }
  vulkan::BufferRange offsets_range() const {
    return {offsets.buffer, offsets_at, offsets.size - offsets_at};
  }
  // New input (and offsets), the whole output buffer poisoned.
  void fill(std::span<const std::byte> input, std::span<const std::uint32_t> new_offsets = {}) {
    if (!input.empty()) std::memcpy(in.mapped, input.data(), input.size());
    if (!new_offsets.empty()) {
      std::memcpy(offsets.mapped + offsets_at, new_offsets.data(), new_offsets.size_bytes());
    }
    std::memset(out.mapped, static_cast<int>(kPoison), out.size);
  }
  std::span<const std::byte> output() const {
    return {out.mapped + guard * element, out_n * element};
  }
  // Fails the test where a byte outside the output range is not poison any more.
  void expect_guards_intact() const {
    const std::size_t after = (guard + out_n) * element;
    for (std::size_t i = 0; i < out.size; ++i) {
      if (i == guard * element) i = after;
      if (i < out.size) {
        ASSERT_EQ(out.mapped[i], kPoison) << "byte " << i << " of out's buffer";
      }
    }
  }

  App& app_;
  std::size_t element;
  std::uint64_t guard, out_n;
  VkDeviceSize offsets_at;
  AppBuffer in, out, workspace, offsets;
};

// Elements from one binding-aligned offset to the next (at least one).
std::uint64_t aligned_guard(const App& app, DType dtype) {
  return std::max<std::uint64_t>(app.limits.minStorageBufferOffsetAlignment / size_of(dtype), 1);
}

// One Plan per spec for the whole program, never destroyed (as App's device): the plans of
// a device share its pipelines only while one of them lives, and a CPU driver takes a while
// to make each again.
const vulkan::Plan& plan_for(App& app, const ScanSpec& spec) {
  static auto& plans = *new std::map<std::string, std::unique_ptr<vulkan::Plan>>;
  auto& plan = plans[describe(spec)];
  if (!plan) plan = std::make_unique<vulkan::Plan>(app.handles, spec);
  return *plan;
}

// A command buffer of the application's with one recorded run in it.
struct Recording {
  explicit Recording(App& app) : app_(app), pool(app.make_pool()), cmd(app.begin(pool)) {}
  ~Recording() { vkDestroyCommandPool(app_.device, pool, nullptr); }
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;
  App& app_;
  VkCommandPool pool;
  VkCommandBuffer cmd;
};

// Checks a batched or segmented output against the CPU reference (`offsets` empty: rows of
// `row_length`).
void expect_matches(const ScanSpec& spec, std::span<const std::byte> input,
                    std::span<const std::byte> output, std::size_t row_length,
                    std::span<const std::int64_t> offsets, std::optional<Value> init) {
  reference::visit(spec.dtype, [&](auto tag) {
    using T = decltype(tag);
    std::optional<T> typed_init;
    if (init) typed_init = init->as<T>();
    const std::span<const T> x(reinterpret_cast<const T*>(input.data()), input.size() / sizeof(T));
    const std::span<const T> y(reinterpret_cast<const T*>(output.data()),
                               output.size() / sizeof(T));
    const auto wrong =
        offsets.empty()
            ? reference::first_mismatch_rows<T>(spec.op, spec.kind, x, row_length, typed_init, y)
            : reference::first_mismatch_segments<T>(spec.op, spec.kind, x, offsets, typed_init, y);
    ASSERT_FALSE(wrong.has_value()) << "first wrong output element " << *wrong;
  });
}

// Every output element equals init (or the identity): reductions of empty rows or segments.
void expect_all_init(const ScanSpec& spec, std::span<const std::byte> output,
                     std::optional<Value> init) {
  const Value want = init.value_or(reference::identity_value(spec.dtype, spec.op));
  const std::size_t element = size_of(spec.dtype);
  for (std::size_t i = 0; i < output.size() / element; ++i) {
    ASSERT_EQ(std::memcmp(output.data() + i * element, &want.bits, element), 0) << "output " << i;
  }
}

// Records rows x row_length once (workspace: exactly workspace_bytes(n); outputs `guard`
// elements into their buffer, 0: aligned_guard()) and submits it twice, each time on new
// random input.
void expect_rows_exact(App& app, const ScanSpec& spec, std::uint64_t rows, std::uint64_t row_length,
                       std::optional<Value> init = {}, std::uint64_t guard = 0) {
  const int submissions = 2;
  const std::uint64_t n = rows * row_length;
  const std::uint64_t out_n = spec.kind == Kind::reduce ? rows : n;
  const vulkan::Plan& plan = plan_for(app, spec);
  if (guard == 0) guard = aligned_guard(app, spec.dtype);
  RunBuffers buffers(app, spec.dtype, n, out_n, plan.workspace_bytes(n), 0, guard);
  Recording recording(app);
  plan.record_rows(recording.cmd, buffers.in_range(), buffers.out_range(), rows, row_length,
                   buffers.workspace_range(), init);
  app.end(recording.cmd);
  for (int s = 0; s < submissions; ++s) {
    const std::uint64_t seed = next_seed();
    SCOPED_TRACE(describe(spec) + " " + std::to_string(rows) + " x " + std::to_string(row_length) +
                 " submission " + std::to_string(s) + " seed=" + std::to_string(seed));
    const auto input = reference::random_input(spec.dtype, spec.op, n, seed);
    buffers.fill(input);
    app.submit_and_wait(recording.cmd);
    buffers.expect_guards_intact();
    if (row_length == 0) {
      expect_all_init(spec, buffers.output(), init);
    } else {
      expect_matches(spec, input, buffers.output(), row_length, {}, init);
    }
  }
}

// Offsets of segments whose lengths are drawn from `lengths` (seeded) until about `budget`
// elements.
std::vector<std::int64_t> random_offsets(std::uint64_t seed, std::size_t budget,
                                         const std::vector<std::size_t>& lengths) {
  std::mt19937_64 random(seed);
  std::vector<std::int64_t> offsets{0};
  while (static_cast<std::size_t>(offsets.back()) < budget) {
    offsets.push_back(offsets.back() +
                      static_cast<std::int64_t>(lengths[random() % lengths.size()]));
  }
  return offsets;
}

std::vector<std::uint32_t> as_uint32(std::span<const std::int64_t> offsets) {
  return {offsets.begin(), offsets.end()};
}

// Records a segmented scan of offsets.back() elements in offsets.size() - 1 segments once and
// submits it once per entry of `each_offsets` (all with the same n and segment count), each
// time with those offsets and new random input: the offsets are read on the device.
void expect_segments_exact(App& app, const ScanSpec& spec,
                           const std::vector<std::vector<std::int64_t>>& each_offsets,
                           std::optional<Value> init = {}) {
  const auto n = static_cast<std::uint64_t>(each_offsets.front().back());
  const std::uint64_t segments = each_offsets.front().size() - 1;
  const std::uint64_t out_n = spec.kind == Kind::reduce ? segments : n;
  const vulkan::Plan& plan = plan_for(app, spec);
  RunBuffers buffers(app, spec.dtype, n, out_n, plan.workspace_bytes(n), segments,
                     aligned_guard(app, spec.dtype));
  Recording recording(app);
  plan.record_segments(recording.cmd, buffers.in_range(), buffers.out_range(), n,
                       buffers.offsets_range(), segments, buffers.workspace_range(), init);
  app.end(recording.cmd);
  for (std::size_t s = 0; s < each_offsets.size(); ++s) {
    const auto& offsets = each_offsets[s];
    ASSERT_EQ(offsets.back(), static_cast<std::int64_t>(n));
    ASSERT_EQ(offsets.size(), segments + 1);
    const std::uint64_t seed = next_seed();
    SCOPED_TRACE(describe(spec) + " " + std::to_string(segments) + " segments of " +
                 std::to_string(n) + " elements, submission " + std::to_string(s) +
                 " seed=" + std::to_string(seed));
    const auto input = reference::random_input(spec.dtype, spec.op, n, seed);
    buffers.fill(input, as_uint32(offsets));
    app.submit_and_wait(recording.cmd);
    buffers.expect_guards_intact();
    if (n == 0) {
      expect_all_init(spec, buffers.output(), init);
    } else {
      expect_matches(spec, input, buffers.output(), 0, offsets, init);
    }
  }
}

// Shuffles the segment boundaries of `offsets` (seeded) keeping n and the segment count.
std::vector<std::int64_t> reshuffled(std::vector<std::int64_t> offsets, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  const std::int64_t n = offsets.back();
  for (std::size_t s = 1; s + 1 < offsets.size(); ++s) {
    offsets[s] = static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(n + 1));
  }
  std::sort(offsets.begin(), offsets.end());
  return offsets;
}

Value u32(std::uint32_t x) {
  return Value::of(x);
}

// Row lengths around a subgroup (4 to 64 lanes) and a tile (2^11 to 2^13 elements), rows
// long enough for row-aligned tiles (docs/protocol.md, "Row-aligned tiles"), and one row,
// resubmitted.
TEST_F(VulkanRecord, RowsOfEveryShapeClass) {
  const ScanSpec inclusive{DType::u32, Op::add, Kind::inclusive};
  for (const auto& [rows, length] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{{3001, 1},
                                                                                         {1000, 3},
                                                                                         {700, 7},
                                                                                         {129, 33},
                                                                                         {9, 2047},
                                                                                         {9, 2048},
                                                                                         {9, 2049},
                                                                                         {5, 4095},
                                                                                         {5, 4096},
                                                                                         {5, 4097},
                                                                                         {3, 8191},
                                                                                         {3, 8192},
                                                                                         {3, 8193},
                                                                                         {2, 20001},
                                                                                         {3, 32768},
                                                                                         {1, 70001},
                                                                                         {1, 1}}) {
    expect_rows_exact(app, inclusive, rows, length);
  }
}

TEST_F(VulkanRecord, RowsExclusiveAndReducedWithInitPerRow) {
  for (const auto& [rows, length] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
           {2000, 1}, {1000, 5}, {40, 4095}, {20, 4097}, {3, 8193}, {1, 30001}, {3, 16388}}) {
    expect_rows_exact(app, {DType::u32, Op::add, Kind::exclusive}, rows, length, u32(7));
    expect_rows_exact(app, {DType::u32, Op::add, Kind::reduce}, rows, length, u32(0xFFFFFFF0u));
  }
  // A float and a 64-bit type: the reduction order of float rows, two-word values.
  expect_rows_exact(app, {DType::f32, Op::add, Kind::reduce}, 300, 333, Value::of(0.5f));
  expect_rows_exact(app, {DType::u64, Op::add, Kind::exclusive}, 77, 1001,
                    Value::of(std::uint64_t{0x1234567890ull}));
  // Outputs an element past a binding-aligned offset: moved element by element, the rows'
  // outputs counted from there.
  expect_rows_exact(app, {DType::u32, Op::add, Kind::reduce}, 1000, 13, u32(1), 1);
  // Rows that would take row-aligned tiles, but an element past the offset: segmented tiles.
  expect_rows_exact(app, {DType::u32, Op::add, Kind::exclusive}, 3, 32768, u32(3), 1);
}

TEST_F(VulkanRecord, EmptyBatches) {
  // Rows of nothing reduce to init, each (one fill for 32 bits; 64-bit init in updates of
  // at most 64 KiB: 10000 rows take two).
  expect_rows_exact(app, {DType::u32, Op::add, Kind::reduce}, 5, 0, u32(42));
  expect_rows_exact(app, {DType::u64, Op::add, Kind::reduce}, 10000, 0,
                    Value::of(std::uint64_t{0xABCDEF0123456789ull}));
  // No rows: nothing is written.
  expect_rows_exact(app, {DType::u32, Op::add, Kind::reduce}, 0, 5);
  expect_rows_exact(app, {DType::u32, Op::add, Kind::inclusive}, 0, 0);
  expect_rows_exact(app, {DType::u32, Op::add, Kind::inclusive}, 5, 0);
}

// The workspace of the largest batch serves every smaller one, and a workspace one byte
// short of a batch's need is refused.
TEST_F(VulkanRecord, RowsWorkspaceOfMaxNServesSmallerBatches) {
  const ScanSpec spec{DType::u32, Op::add, Kind::inclusive};
  const vulkan::Plan& plan = plan_for(app, spec);
  const std::uint64_t max_n = 100000;
  RunBuffers buffers(app, spec.dtype, max_n, max_n, plan.workspace_bytes(max_n));
  {
    Recording recording(app);
    vulkan::BufferRange short_workspace = buffers.workspace_range();
    short_workspace.size -= 1;
    EXPECT_THROW(plan.record_rows(recording.cmd, buffers.in_range(), buffers.out_range(), 100, 1000,
                                  short_workspace),
                 UsageError);
    app.end(recording.cmd);
  }
  for (const auto& [rows, length] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
           {100, 1000}, {33333, 3}, {2, 4097}, {3, 32768}, {7, 11}}) {
    const std::uint64_t n = rows * length;
    EXPECT_LE(plan.workspace_bytes(n), plan.workspace_bytes(max_n));
    Recording recording(app);
    plan.record_rows(recording.cmd, {buffers.in.buffer, 0, n * 4}, {buffers.out.buffer, 0, n * 4},
                     rows, length, buffers.workspace_range());
    app.end(recording.cmd);
    const std::uint64_t seed = next_seed();
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(length) +
                 " seed=" + std::to_string(seed));
    const auto input = reference::random_input(spec.dtype, spec.op, n, seed);
    buffers.fill(input);
    app.submit_and_wait(recording.cmd);
    expect_matches(spec, input, buffers.output().first(n * 4), length, {}, {});
  }
}

const std::vector<std::size_t> every_length_class{
    0, 0, 1, 2, 3, 5, 7, 31, 33, 64, 1000, 2047, 2048, 2049, 4095, 4097, 8191, 8193};

TEST_F(VulkanRecord, SegmentsOfEveryLengthClassEveryKind) {
  for (const Kind kind : {Kind::inclusive, Kind::exclusive, Kind::reduce}) {
    const ScanSpec spec{DType::u32, Op::add, kind};
    const auto offsets = random_offsets(next_seed(), 60000, every_length_class);
    // The same recording on other segments of the same n: the offsets are read when it runs.
    expect_segments_exact(app, spec, {offsets, reshuffled(offsets, next_seed())});
    const auto short_ones = random_offsets(next_seed(), 5000, {0, 1, 2, 7});
    expect_segments_exact(app, spec, {short_ones, reshuffled(short_ones, next_seed())}, u32(9));
  }
}

TEST_F(VulkanRecord, EmptySegmentsFirstLastAndInRunsOneSegmentAndInit) {
  const std::vector<std::vector<std::int64_t>> cases{
      {0, 0, 0, 0, 5, 5, 5, 4100, 4100, 9000, 9000, 9000},  // empty first, in runs, last
      {0, 12345},                                           // one segment
      {0, 1},                                               // one element
      {0, 0, 0, 1},                                         // empty ones, then one element
      {0, 3000, 3000, 3000},                                // empty ones last
  };
  for (const auto& offsets : cases) {
    expect_segments_exact(app, {DType::u32, Op::add, Kind::reduce}, {offsets, offsets}, u32(100));
    expect_segments_exact(app, {DType::u32, Op::add, Kind::exclusive}, {offsets}, u32(3));
    expect_segments_exact(app, {DType::u32, Op::add, Kind::inclusive}, {offsets});
  }
  // A float and a 64-bit type.
  const auto offsets = random_offsets(next_seed(), 30000, every_length_class);
  expect_segments_exact(app, {DType::f32, Op::add, Kind::inclusive}, {offsets}, Value::of(1.5f));
  expect_segments_exact(app, {DType::u64, Op::add, Kind::reduce}, {offsets},
                        Value::of(std::uint64_t{0x100000001ull}));
}

TEST_F(VulkanRecord, SegmentsOfNoElements) {
  // Segments of nothing reduce to init; their offsets (all 0) are not read.
  expect_segments_exact(app, {DType::u32, Op::add, Kind::reduce}, {{0, 0, 0, 0}}, u32(5));
  expect_segments_exact(app, {DType::u32, Op::add, Kind::reduce}, {{0}});
  expect_segments_exact(app, {DType::u32, Op::add, Kind::inclusive}, {{0, 0}});
}

// Offsets that break the precondition (not from 0, decreasing, past n, not ending at n)
// give unspecified values, but nothing outside the output range is written, the inputs and
// offsets are not written, and the run ends; the same workspace then serves a correct run.
TEST_F(VulkanRecord, InvalidOffsetsStayInsideTheirBuffers) {
  const std::uint64_t n = 20000, segments = 700;
  for (const Kind kind : {Kind::reduce, Kind::inclusive}) {
    const ScanSpec spec{DType::u32, Op::add, kind};
    const vulkan::Plan& plan = plan_for(app, spec);
    const std::uint64_t out_n = kind == Kind::reduce ? segments : n;
    // A reduction's out one element past a binding-aligned offset, so that a write at
    // out_shift - 1 (the segment before entry 0) shows.
    const std::uint64_t guard = kind == Kind::reduce ? 1 : aligned_guard(app, spec.dtype);
    RunBuffers buffers(app, spec.dtype, n, out_n, plan.workspace_bytes(n), segments, guard);
    Recording recording(app);
    plan.record_segments(recording.cmd, buffers.in_range(), buffers.out_range(), n,
                         buffers.offsets_range(), segments, buffers.workspace_range());
    app.end(recording.cmd);
    for (int variant = 0; variant < 4; ++variant) {
      const std::uint64_t seed = next_seed();
      SCOPED_TRACE(describe(spec) + " variant " + std::to_string(variant) +
                   " seed=" + std::to_string(seed));
      std::mt19937_64 random(seed);
      std::vector<std::uint32_t> offsets(segments + 1);
      for (std::uint32_t& o : offsets) {
        switch (variant) {
          case 0:  // anything
            o = static_cast<std::uint32_t>(random());
            break;
          case 1:  // inside [0, n], unsorted
            o = static_cast<std::uint32_t>(random() % (n + 1));
            break;
          case 2:  // sorted, from 1000 on, not reaching n
          case 3:  // sorted, from 0, past n
            o = static_cast<std::uint32_t>(random() % (variant == 2 ? n / 2 : 2 * n)) +
                (variant == 2 ? 1000 : 0);
            break;
        }
      }
      if (variant >= 2) std::sort(offsets.begin(), offsets.end());
      if (variant == 3) offsets.front() = 0;
      const auto input = reference::random_input(spec.dtype, spec.op, n, seed);
      buffers.fill(input, offsets);
      app.submit_and_wait(recording.cmd);
      buffers.expect_guards_intact();
      ASSERT_EQ(std::memcmp(buffers.in.mapped, input.data(), input.size()), 0) << "input written";
      ASSERT_EQ(std::memcmp(buffers.offsets.mapped + buffers.offsets_at, offsets.data(),
                            offsets.size() * 4),
                0)
          << "offsets written";
    }
    // Then valid offsets on the same recording and workspace: exact.
    std::vector<std::int64_t> offsets(segments + 1, 0);
    offsets.back() = static_cast<std::int64_t>(n);
    offsets = reshuffled(offsets, next_seed());
    const std::uint64_t seed = next_seed();
    SCOPED_TRACE(describe(spec) + " valid offsets, seed=" + std::to_string(seed));
    const auto input = reference::random_input(spec.dtype, spec.op, n, seed);
    buffers.fill(input, as_uint32(offsets));
    app.submit_and_wait(recording.cmd);
    buffers.expect_guards_intact();
    expect_matches(spec, input, buffers.output(), 0, offsets, {});
  }
}

TEST_F(VulkanRecord, BadBatchedAndSegmentedRequestsAreRefused) {
  const ScanSpec spec{DType::u32, Op::add, Kind::reduce};
  const vulkan::Plan& plan = plan_for(app, spec);
  const std::uint64_t n = 1000, segments = 10;
  RunBuffers buffers(app, spec.dtype, n, n, plan.workspace_bytes(n), segments);
  Recording recording(app);
  const auto in = buffers.in_range(), out = buffers.out_range(), ws = buffers.workspace_range(),
             offsets = buffers.offsets_range();
  VkCommandBuffer cmd = recording.cmd;
  const auto refused = [](auto&& record, const std::string& says) {
    try {
      record();
      ADD_FAILURE() << "not refused; expected a message with \"" << says << "\"";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  // More elements than one batched or segmented run takes: the limit is named.
  refused([&] { plan.record_rows(cmd, in, out, std::uint64_t{1} << 20, 1 << 12, ws); }, "at most");
  refused([&] { plan.record_rows(cmd, in, out, std::uint64_t{1} << 40, 1ull << 40, ws); }, "2^64");
  refused([&] { plan.record_segments(cmd, in, out, std::uint64_t{1} << 31, offsets, 1, ws); },
          "at most");
  // More segments' reductions than one output binding holds (before the offsets are
  // looked at).
  const vulkan::Plan& wide = plan_for(app, {DType::u64, Op::add, Kind::reduce});
  refused([&] { wide.record_segments(cmd, in, out, n, offsets, wide.max_elements() + 1, ws); },
          "more outputs than one binding takes");
  // Buffers too small for the batch, the output or the offsets.
  refused([&] { plan.record_rows(cmd, in, out, 2, n, ws); }, "in range");
  refused(
      [&] {
        plan.record_segments(cmd, in, out, n, {offsets.buffer, offsets.offset, 40}, 10, ws);
      },
      "offsets range");
  // No segments for n elements; offsets that overlap the output.
  refused([&] { plan.record_segments(cmd, in, out, n, offsets, 0, ws); }, "no segments");
  refused(
      [&] {
        plan.record_segments(cmd, in, out, n, {out.buffer, 0, 44}, segments, ws);
      },
      "overlap");
  // An offsets binding that does not start at the device's binding alignment.
  const VkDeviceSize alignment = app.limits.minStorageBufferOffsetAlignment;
  std::printf("minStorageBufferOffsetAlignment: %llu\n",
              static_cast<unsigned long long>(alignment));
  if (alignment > 1) {  // (a device that binds from any byte has no misaligned offset)
    refused(
        [&] {
          plan.record_segments(cmd, in, out, n, {offsets.buffer, alignment / 2, offsets.size},
                               segments, ws);
        },
        "minStorageBufferOffsetAlignment");
  }
  // rts has no batched or segmented kernels.
  const vulkan::Plan rts(app.handles, {DType::u32, Op::add, Kind::inclusive, Algorithm::rts});
  refused([&] { rts.record_rows(cmd, in, out, 10, 10, ws); }, "rts");
  refused([&] { rts.record_segments(cmd, in, out, n, offsets, segments, ws); }, "rts");
  refused([&] { plan.record_rows(VK_NULL_HANDLE, in, out, 10, 10, ws); }, "command buffer");
  refused([&] { plan.record_rows(cmd, in, out, 10, 10, ws, Value::of(1.5f)); }, "init");
  app.end(cmd);
}

}  // namespace
}  // namespace gpuscan::testing
