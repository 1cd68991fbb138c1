// The compaction family on the caller's CUDA memory and streams (gpuscan/cuda_compaction.hpp)
// and the C ABI's gpuscan_cuda_compact: every operation on one workspace across sizes, in
// chunks, from pointers aligned only to their element size, in a captured graph replayed on
// new inputs, through the one-call helpers, select and unique in place, and every refusal.
// Random inputs (seed printed), outputs poisoned and checked whole: the kept elements, the
// count, nothing written past them.
// Needs a CUDA GPU; where there is none (CI) every test skips and says why.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/compact_plan.hpp"
#include "cuda_test_support.hpp"
#include "gpuscan/cuda_compaction.hpp"
#include "gpuscan/error.hpp"
#include "gpuscan/gpuscan.h"

namespace gpuscan {
namespace {

using testing::Memory;
using testing::next_seed;

using CudaCompactionInteropTest = testing::CudaGpuTest;

constexpr std::uint64_t kPoison = 0xA5A5A5A5A5A5A5A5ull;

// Input of values in [0, 16) in runs (a new value one time in three), flags nonzero half the
// time; the predicate is x < 8.
template <class T>
struct Case {
  std::vector<T> in;
  std::vector<std::uint32_t> flags;
  T constant = static_cast<T>(8);

  Case(std::size_t n, std::uint64_t seed) : in(n), flags(n) {
    std::mt19937_64 rng(seed);
    for (std::size_t i = 0; i < n; ++i) {
      in[i] = i > 0 && rng() % 3 ? in[i - 1] : static_cast<T>(rng() % 16);
      flags[i] = rng() % 2 ? static_cast<std::uint32_t>(rng() | 1) : 0u;
    }
  }

  bool keeps(Compaction c, std::size_t i) const {
    if (takes_flags(c)) return flags[i] != 0;
    if (c == Compaction::unique || c == Compaction::run_length_encode) {
      return i == 0 || in[i] != in[i - 1];
    }
    return in[i] < constant;
  }
  // The reference: the kept elements in order; `second` gets partition's rejected elements or
  // run-length encoding's lengths (as uint64 bits).
  std::vector<T> kept(Compaction c, std::vector<std::uint64_t>& second) const {
    std::vector<T> out;
    second.clear();
    std::size_t run_start = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (keeps(c, i)) {
        if (c == Compaction::run_length_encode && !out.empty()) second.push_back(i - run_start);
        run_start = i;
        out.push_back(in[i]);
      } else if (is_partition(c)) {
        std::uint64_t bits = 0;
        std::memcpy(&bits, &in[i], sizeof(T));
        second.push_back(bits);
      }
    }
    if (c == Compaction::run_length_encode && !out.empty()) second.push_back(in.size() - run_start);
    return out;
  }
};

// Device buffers for one run of `n` elements (outputs one element longer, to see a write past
// the end), the outputs and count poisoned.
template <class T>
struct Buffers {
  Memory in, flags, out, second, count;
  explicit Buffers(std::size_t n)
      : in(n * sizeof(T)), flags(n * 4), out((n + 1) * sizeof(T)), second((n + 1) * 8), count(8) {}
  void upload(const Case<T>& c) {
    const std::size_t n = c.in.size();
    EXPECT_EQ(cudaMemcpy(in.p, c.in.data(), n * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(flags.p, c.flags.data(), n * 4, cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemset(out.p, 0xA5, (n + 1) * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemset(second.p, 0xA5, (n + 1) * 8), cudaSuccess);
    EXPECT_EQ(cudaMemset(count.p, 0xA5, 8), cudaSuccess);
  }
  cuda::CompactOutputs outputs(Compaction c) {
    const bool two = is_partition(c) || c == Compaction::run_length_encode;
    return {out.p, two ? second.p : nullptr, static_cast<std::uint64_t*>(count.p)};
  }
};

// Checks a finished run against the reference (`what` begins each message).
template <class T>
void expect_result(const Case<T>& c, Compaction op, Buffers<T>& b, const std::string& what) {
  std::vector<std::uint64_t> want_second;
  const std::vector<T> want = c.kept(op, want_second);
  const std::size_t n = c.in.size();
  std::uint64_t count = 0;
  std::vector<T> out(n + 1);
  ASSERT_EQ(cudaMemcpy(&count, b.count.p, 8, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(out.data(), b.out.p, (n + 1) * sizeof(T), cudaMemcpyDeviceToHost),
            cudaSuccess);
  ASSERT_EQ(count, want.size()) << what << ": the count";
  ASSERT_EQ(std::memcmp(out.data(), want.data(), want.size() * sizeof(T)), 0)
      << what << ": the kept elements";
  T poison;
  std::memcpy(&poison, &kPoison, sizeof(T));
  ASSERT_EQ(std::memcmp(&out[want.size()], &poison, sizeof(T)), 0) << what << ": written past";
  if (want_second.empty() && !is_partition(op)) return;
  const std::size_t width = op == Compaction::run_length_encode ? 8 : sizeof(T);
  std::vector<std::byte> second((n + 1) * 8);
  ASSERT_EQ(cudaMemcpy(second.data(), b.second.p, second.size(), cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (std::size_t i = 0; i < want_second.size(); ++i) {
    ASSERT_EQ(std::memcmp(second.data() + i * width, &want_second[i], width), 0)
        << what << ": second output element " << i << " of " << want_second.size();
  }
  ASSERT_EQ(std::memcmp(second.data() + want_second.size() * width, &kPoison, width), 0)
      << what << ": second output written past its end";
}

// flags_elsewhere: the flags' address, if not b.flags.
template <class T>
void enqueue(const cuda::CompactPlan& plan, Buffers<T>& b, const Case<T>& c, std::size_t n,
             cudaStream_t stream, void* workspace, std::size_t bytes,
             const void* flags_elsewhere = nullptr) {
  const Compaction op = plan.spec().compaction;
  const std::optional<Value> constant = op == Compaction::select_if || op == Compaction::partition
                                            ? std::optional(Value::of(c.constant))
                                            : std::nullopt;
  const void* flags = !takes_flags(op) ? nullptr : flags_elsewhere ? flags_elsewhere : b.flags.p;
  auto* count = static_cast<std::uint64_t*>(b.count.p);
  if (is_partition(op)) {
    plan.enqueue_partition(b.in.p, b.out.p, b.second.p, count, n, stream, workspace, bytes,
                           constant, flags);
  } else if (op == Compaction::run_length_encode) {
    plan.enqueue_run_length_encode(b.in.p, b.out.p, static_cast<std::uint64_t*>(b.second.p), count,
                                   n, stream, workspace, bytes);
  } else {
    plan.enqueue(b.in.p, b.out.p, count, n, stream, workspace, bytes, constant, flags);
  }
}

const std::vector<Compaction> all_operations{
    Compaction::select_if, Compaction::select_flagged,    Compaction::unique,
    Compaction::partition, Compaction::run_length_encode, Compaction::partition_flagged,
};

template <class T>
void every_operation_on_one_workspace() {
  for (Compaction op : all_operations) {
    const cuda::CompactPlan plan({op, dtype_of<T>(), Predicate::lt, DType::u32});
    const std::size_t max_n = (std::size_t{1} << 22) + 7;
    const std::size_t bytes = plan.workspace_bytes(max_n);
    Memory workspace(bytes);
    CUDA_OK(cudaMemset(workspace.p, 0, bytes));
    Buffers<T> b(max_n);
    for (std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{4097}, max_n,
                          std::size_t{70001}, std::size_t{3}}) {
      const std::uint64_t seed = next_seed();
      const Case<T> c(n, seed);
      b.upload(c);
      enqueue(plan, b, c, n, nullptr, workspace.p, bytes);
      CUDA_OK(cudaDeviceSynchronize());
      expect_result(c, op, b,
                    std::string(to_string(op)) + " " + std::string(to_string(dtype_of<T>())) +
                        " n=" + std::to_string(n) + " seed=" + std::to_string(seed));
    }
  }
}

TEST_F(CudaCompactionInteropTest, EveryOperationOnOneWorkspaceAcrossSizes) {
  every_operation_on_one_workspace<std::uint32_t>();
  every_operation_on_one_workspace<double>();
}

// Chunks of one tile (a test hook: a plan's chunk is what one kernel run takes, 2^32 - 2
// tiles): the count, the element before a chunk and the open run carried from chunk to chunk
// in the workspace.
TEST_F(CudaCompactionInteropTest, ChunksCarryTheCountAndTheOpenRun) {
  for (Compaction op : all_operations) {
    int device = 0;
    CUDA_OK(cudaGetDevice(&device));
    const cuda::internal::CompactPlanImpl plan({op, DType::u64, Predicate::lt, DType::u32},
                                               testing::Options{.chunk_elements = 1}, device);
    const std::size_t n = 100003;
    const std::size_t bytes = plan.workspace_bytes(n);
    Memory workspace(bytes);
    CUDA_OK(cudaMemset(workspace.p, 0, bytes));
    Buffers<std::uint64_t> b(n);
    for (int round = 0; round < 2; ++round) {
      const std::uint64_t seed = next_seed();
      const Case<std::uint64_t> c(n, seed);
      b.upload(c);
      const std::optional<Value> constant =
          op == Compaction::select_if || op == Compaction::partition
              ? std::optional(Value::of(c.constant))
              : std::nullopt;
      plan.enqueue(b.in.p, b.outputs(op), n, nullptr, workspace.p, bytes, constant,
                   takes_flags(op) ? b.flags.p : nullptr);
      CUDA_OK(cudaDeviceSynchronize());
      expect_result(c, op, b,
                    std::string(to_string(op)) + " in chunks, seed=" + std::to_string(seed));
    }
  }
}

TEST_F(CudaCompactionInteropTest, PointersAlignedOnlyToTheElementSize) {
  const std::size_t n = 300001;
  int device = 0;
  CUDA_OK(cudaGetDevice(&device));
  for (Compaction op : all_operations) {
    const cuda::internal::CompactPlanImpl plan({op, DType::u32, Predicate::lt, DType::u32}, {},
                                               device);
    const std::size_t bytes = plan.workspace_bytes(n);
    Memory workspace(bytes);
    CUDA_OK(cudaMemset(workspace.p, 0, bytes));
    const std::uint64_t seed = next_seed();
    const Case<std::uint32_t> c(n, seed);
    // Buffers with room for more, each pointer one element on from its start.
    Buffers<std::uint32_t> b(n + 4);
    CUDA_OK(cudaMemcpy(b.in.bytes() + 4, c.in.data(), n * 4, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(b.flags.bytes() + 4, c.flags.data(), n * 4, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(b.out.p, 0xA5, (n + 5) * 4));
    CUDA_OK(cudaMemset(b.second.p, 0xA5, (n + 5) * 8));
    const std::size_t second_width = op == Compaction::run_length_encode ? 8 : 4;
    const cuda::CompactOutputs outputs = b.outputs(op);
    const cuda::CompactOutputs shifted{b.out.bytes() + 4,
                                       outputs.second ? b.second.bytes() + second_width : nullptr,
                                       outputs.count};
    plan.enqueue(b.in.bytes() + 4, shifted, n, nullptr, workspace.p, bytes,
                 op == Compaction::select_if || op == Compaction::partition
                     ? std::optional(Value::of(c.constant))
                     : std::nullopt,
                 takes_flags(op) ? b.flags.bytes() + 4 : nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    // Read back as if the buffers started one element on: element -1 must still be poison.
    std::uint32_t before = 0;
    CUDA_OK(cudaMemcpy(&before, b.out.p, 4, cudaMemcpyDeviceToHost));
    EXPECT_EQ(before, 0xA5A5A5A5u) << to_string(op) << ": written before the output";
    std::vector<std::uint64_t> want_second;
    const std::vector<std::uint32_t> want = c.kept(op, want_second);
    std::vector<std::uint32_t> out(want.size() + 1);
    CUDA_OK(cudaMemcpy(out.data(), b.out.bytes() + 4, out.size() * 4, cudaMemcpyDeviceToHost));
    EXPECT_EQ(std::memcmp(out.data(), want.data(), want.size() * 4), 0)
        << to_string(op) << " seed=" << seed;
    EXPECT_EQ(out.back(), 0xA5A5A5A5u) << to_string(op) << ": written past the count";
  }
}

// Flags are read a whole tile at a time only where they are 16-byte aligned (compaction.cuh,
// load_flag_masks): 8-byte flags 16-byte aligned take that path, 8-byte flags one flag on from
// an aligned start the row-by-row path in every tile; over 4- and 8-byte elements, half the
// nonzero flags nonzero in their high word only.
template <class T>
void eight_byte_flags_at_both_alignments() {
  const std::size_t n = 200003;
  for (Compaction op : {Compaction::select_flagged, Compaction::partition_flagged}) {
    for (std::size_t offset : {std::size_t{0}, std::size_t{8}}) {
      const cuda::CompactPlan plan({op, dtype_of<T>(), Predicate::lt, DType::u64});
      const std::size_t bytes = plan.workspace_bytes(n);
      Memory workspace(bytes);
      CUDA_OK(cudaMemset(workspace.p, 0, bytes));
      const std::uint64_t seed = next_seed();
      const Case<T> c(n, seed);
      std::vector<std::uint64_t> wide(n);
      for (std::size_t i = 0; i < n; ++i) {
        wide[i] = i % 2 ? std::uint64_t{c.flags[i]} << 32 : c.flags[i];
      }
      Memory flags(n * 8 + 16);
      CUDA_OK(cudaMemcpy(flags.bytes() + offset, wide.data(), n * 8, cudaMemcpyHostToDevice));
      Buffers<T> b(n);
      b.upload(c);
      enqueue(plan, b, c, n, nullptr, workspace.p, bytes, flags.bytes() + offset);
      CUDA_OK(cudaDeviceSynchronize());
      expect_result(c, op, b,
                    std::string(to_string(op)) + " " + std::string(to_string(dtype_of<T>())) +
                        ", 8-byte flags " + std::to_string(offset) +
                        " bytes from an aligned start, seed=" + std::to_string(seed));
    }
  }
}

TEST_F(CudaCompactionInteropTest, EightByteFlagsAlignedOrOnlyToTheirSize) {
  eight_byte_flags_at_both_alignments<std::uint32_t>();
  eight_byte_flags_at_both_alignments<std::uint64_t>();
}

// The count stays on the device: a graph recorded once and replayed is exact each time, on
// new input.
TEST_F(CudaCompactionInteropTest, CapturedGraphReplayedOnNewInputs) {
  const cuda::CompactPlan plan({Compaction::unique, DType::i32});
  const std::size_t n = (std::size_t{1} << 21) + 3;
  const std::size_t bytes = plan.workspace_bytes(n);
  Memory workspace(bytes);
  Buffers<std::int32_t> b(n);
  cudaStream_t stream = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUDA_OK(cudaMemsetAsync(workspace.p, 0, bytes, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  cudaGraph_t graph = nullptr;
  CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  plan.enqueue(b.in.p, b.out.p, static_cast<std::uint64_t*>(b.count.p), n, stream, workspace.p,
               bytes);
  CUDA_OK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 4; ++replay) {
    const std::uint64_t seed = next_seed();
    const Case<std::int32_t> c(n, seed);
    b.upload(c);
    CUDA_OK(cudaGraphLaunch(exec, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    expect_result(c, Compaction::unique, b,
                  "replay " + std::to_string(replay) + " seed=" + std::to_string(seed));
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

TEST_F(CudaCompactionInteropTest, OneCallHelpersAndTheCAbi) {
  const std::size_t n = 1000003;
  const std::uint64_t seed = next_seed();
  const Case<float> c(n, seed);
  Buffers<float> b(n);
  const auto* in = static_cast<const float*>(b.in.p);
  auto* out = static_cast<float*>(b.out.p);
  auto* count = static_cast<std::uint64_t*>(b.count.p);
  const std::string at = " seed=" + std::to_string(seed);
  b.upload(c);
  cuda::select_if(in, out, count, n, Predicate::lt, c.constant);
  CUDA_OK(cudaDeviceSynchronize());
  expect_result(c, Compaction::select_if, b, "select_if" + at);
  b.upload(c);
  cuda::select_flagged(in, static_cast<const std::uint32_t*>(b.flags.p), out, count, n);
  CUDA_OK(cudaDeviceSynchronize());
  expect_result(c, Compaction::select_flagged, b, "select_flagged" + at);
  b.upload(c);
  cuda::unique(in, out, count, n);
  CUDA_OK(cudaDeviceSynchronize());
  expect_result(c, Compaction::unique, b, "unique" + at);
  b.upload(c);
  cuda::partition(in, out, static_cast<float*>(b.second.p), count, n, Predicate::lt, c.constant);
  CUDA_OK(cudaDeviceSynchronize());
  expect_result(c, Compaction::partition, b, "partition" + at);
  b.upload(c);
  cuda::partition_flagged(in, static_cast<const std::uint32_t*>(b.flags.p), out,
                          static_cast<float*>(b.second.p), count, n);
  CUDA_OK(cudaDeviceSynchronize());
  expect_result(c, Compaction::partition_flagged, b, "partition_flagged" + at);
  b.upload(c);
  cuda::run_length_encode(in, out, static_cast<std::uint64_t*>(b.second.p), count, n);
  CUDA_OK(cudaDeviceSynchronize());
  expect_result(c, Compaction::run_length_encode, b, "run_length_encode" + at);

  // The C ABI on a stream of the caller's.
  int ordinal = 0;
  CUDA_OK(cudaGetDevice(&ordinal));
  gpuscan_device device = nullptr;
  ASSERT_EQ(gpuscan_device_open_cuda(ordinal, &device), GPUSCAN_OK) << gpuscan_last_error();
  cudaStream_t stream = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const gpuscan_compact_spec spec{GPUSCAN_PARTITION, GPUSCAN_F32, GPUSCAN_LT, GPUSCAN_U32};
  b.upload(c);
  ASSERT_EQ(gpuscan_cuda_compact(device, &spec, in, nullptr, n, &c.constant, out, b.second.p, count,
                                 stream),
            GPUSCAN_OK)
      << gpuscan_last_error();
  CUDA_OK(cudaStreamSynchronize(stream));
  expect_result(c, Compaction::partition, b, "C ABI partition" + at);
  // A refusal: one line, nothing launched.
  EXPECT_EQ(
      gpuscan_cuda_compact(device, &spec, in, nullptr, n, &c.constant, out, nullptr, count, stream),
      GPUSCAN_USAGE_ERROR);
  EXPECT_NE(std::string(gpuscan_last_error()).find("d_rejected"), std::string::npos)
      << gpuscan_last_error();
  cudaStreamDestroy(stream);
  gpuscan_device_close(device);
}

// In place (d_out == d_in: docs/protocol.md, "In-place compaction"): select-if, select-flagged
// and unique on a plan and one-call, the buffer checked whole (past the count it still holds
// the input); partitions refuse it.
TEST_F(CudaCompactionInteropTest, SelectAndUniqueInPlace) {
  for (Compaction op : {Compaction::select_if, Compaction::select_flagged, Compaction::unique}) {
    const cuda::CompactPlan plan({op, DType::u32, Predicate::lt, DType::u32});
    for (std::size_t n : {std::size_t{1}, std::size_t{4097}, std::size_t{(1 << 22) + 3}}) {
      const std::size_t bytes = plan.workspace_bytes(n);
      Memory workspace(bytes);
      CUDA_OK(cudaMemset(workspace.p, 0, bytes));
      const std::uint64_t seed = next_seed();
      const Case<std::uint32_t> c(n, seed);
      Buffers<std::uint32_t> b(n);
      b.upload(c);
      const std::optional<Value> constant =
          op == Compaction::select_if ? std::optional(Value::of(c.constant)) : std::nullopt;
      auto* count = static_cast<std::uint64_t*>(b.count.p);
      plan.enqueue(b.in.p, b.in.p, count, n, nullptr, workspace.p, bytes, constant,
                   takes_flags(op) ? b.flags.p : nullptr);
      CUDA_OK(cudaDeviceSynchronize());
      std::vector<std::uint64_t> unused;
      const std::vector<std::uint32_t> want = c.kept(op, unused);
      std::uint64_t got_count = 0;
      std::vector<std::uint32_t> got(n);
      CUDA_OK(cudaMemcpy(&got_count, count, 8, cudaMemcpyDeviceToHost));
      CUDA_OK(cudaMemcpy(got.data(), b.in.p, n * 4, cudaMemcpyDeviceToHost));
      const std::string at = std::string(to_string(op)) + " in place n=" + std::to_string(n) +
                             " seed=" + std::to_string(seed);
      ASSERT_EQ(got_count, want.size()) << at;
      ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0) << at;
      ASSERT_EQ(
          std::memcmp(got.data() + want.size(), c.in.data() + want.size(), (n - want.size()) * 4),
          0)
          << at << ": written past the count";
    }
  }
  // One call, in place.
  const std::size_t n = 100003;
  const Case<std::uint32_t> c(n, next_seed());
  Buffers<std::uint32_t> b(n);
  b.upload(c);
  auto* data = static_cast<std::uint32_t*>(b.in.p);
  cuda::unique(data, data, static_cast<std::uint64_t*>(b.count.p), n);
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<std::uint64_t> unused;
  const std::vector<std::uint32_t> want = c.kept(Compaction::unique, unused);
  std::vector<std::uint32_t> got(want.size());
  CUDA_OK(cudaMemcpy(got.data(), data, want.size() * 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, want) << "one-call unique in place";
  // Partitions have two outputs: never in place.
  const cuda::CompactPlan parts({Compaction::partition, DType::u32, Predicate::lt});
  const std::size_t bytes = parts.workspace_bytes(n);
  Memory workspace(bytes);
  EXPECT_THROW(
      parts.enqueue_partition(b.in.p, b.in.p, b.second.p, static_cast<std::uint64_t*>(b.count.p), n,
                              nullptr, workspace.p, bytes, Value::of(std::uint32_t{8})),
      UsageError);
}

TEST_F(CudaCompactionInteropTest, RefusesWhatItCannotDo) {
  const cuda::CompactPlan plan({Compaction::select_if, DType::u32, Predicate::lt});
  const std::size_t n = 1 << 16;
  const std::size_t bytes = plan.workspace_bytes(n);
  Memory workspace(bytes), in(n * 4 + 16), out(n * 4 + 16), count(16);
  CUDA_OK(cudaMemset(workspace.p, 0, bytes));
  auto* c = static_cast<std::uint64_t*>(count.p);
  const Value eight = Value::of(std::uint32_t{8});
  auto* in_bytes = static_cast<std::byte*>(in.p);
  const auto refused = [&](auto&& call, const char* words) {
    try {
      call();
      ADD_FAILURE() << "accepted; expected a refusal naming '" << words << "'";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refused([&] { plan.enqueue(in.p, in_bytes + 64, c, n, nullptr, workspace.p, bytes, eight); },
          "same array");  // overlapping, not in place
  refused([&] { plan.enqueue(in.p, out.p, c, n, nullptr, workspace.p, bytes / 2, eight); },
          "too small");
  refused([&] { plan.enqueue(in.p, out.p, c, n, nullptr, nullptr, bytes, eight); }, "workspace");
  refused([&] { plan.enqueue(in.p, out.p, c, n, nullptr, workspace.p, bytes); }, "constant");
  refused([&] { plan.enqueue(in.p, out.p, c, n, nullptr, workspace.p, bytes, Value::of(8.0f)); },
          "f32");
  refused([&] { plan.enqueue(in_bytes + 2, out.p, c, n, nullptr, workspace.p, bytes, eight); },
          "aligned");
  refused(
      [&] {
        plan.enqueue(in.p, out.p, reinterpret_cast<std::uint64_t*>(out.p), n, nullptr, workspace.p,
                     bytes, eight);
      },
      "overlap");
  refused([&] { plan.enqueue(in.p, out.p, nullptr, n, nullptr, workspace.p, bytes, eight); },
          "d_count");
  refused([&] { plan.enqueue(in.p, out.p, c, n, nullptr, workspace.p, bytes, eight, in.p); },
          "takes no flags");
  refused(
      [&] {
        plan.enqueue_partition(in.p, out.p, count.p, c, n, nullptr, workspace.p, bytes, eight);
      },
      "enqueue_partition");
  refused(
      [&] {
        cuda::CompactPlan(
            {Compaction::unique, DType::u32, Predicate::lt, DType::u32, Algorithm::csdl});
      },
      "csdl");
  refused(
      [&] {
        cuda::CompactPlan(
            {Compaction::unique, DType::u32, Predicate::lt, DType::u32, Algorithm::rts});
      },
      "rts");
  refused(
      [&] {
        cuda::CompactPlan({Compaction::select_flagged, DType::u32, Predicate::lt, DType::f32});
      },
      "integer");
  const cuda::CompactPlan rle({Compaction::run_length_encode, DType::u32});
  refused([&] { rle.enqueue(in.p, out.p, c, n, nullptr, workspace.p, bytes); },
          "enqueue_run_length_encode");
  // Nothing to compact: the count is 0, written on the stream.
  CUDA_OK(cudaMemset(count.p, 0xA5, 8));
  plan.enqueue(nullptr, nullptr, c, 0, nullptr, nullptr, 0, eight);
  std::uint64_t got = 1;
  CUDA_OK(cudaMemcpy(&got, count.p, 8, cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, 0u);
}

}  // namespace
}  // namespace gpuscan
