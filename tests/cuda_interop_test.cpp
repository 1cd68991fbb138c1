// Scans on the caller's CUDA memory and streams (gpuscan/cuda.hpp) and the C ABI's CUDA
// entry: plans on one workspace across sizes, init from the host and from the device, a
// captured graph replayed on new inputs, two streams at once, the one-call helpers, and
// every refusal. Needs a CUDA GPU; where there is none (CI) every test skips and says why.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/reference.hpp"
#include "cuda_test_support.hpp"
#include "gpuscan/cuda.hpp"
#include "gpuscan/gpuscan.h"

namespace gpuscan {
namespace {

using testing::Memory;
using testing::next_seed;

using CudaInteropTest = testing::CudaGpuTest;

// n random elements of `spec`'s dtype, and what the scan of them with `init` must give.
struct Expected {
  std::vector<std::byte> input, output;
};

Expected expected(const ScanSpec& spec, std::size_t n, std::uint64_t seed,
                  std::optional<Value> init) {
  Expected e;
  e.input = reference::random_input(spec.dtype, spec.op, n, seed);
  e.output = reference::visit(spec.dtype, [&](auto tag) {
    using T = decltype(tag);
    const std::span<const T> x(reinterpret_cast<const T*>(e.input.data()), n);
    const std::vector<T> want = reference::scan(
        spec.kind, spec.op, x, init ? std::optional<T>(init->as<T>()) : std::nullopt);
    const auto bytes = std::as_bytes(std::span(want));
    return std::vector<std::byte>(bytes.begin(), bytes.end());
  });
  return e;
}

// Integer scans compare bit for bit (floats are left to the main suites' tolerance checks).
void expect_output(const Expected& e, const void* d_out, const std::string& what) {
  std::vector<std::byte> got(e.output.size());
  ASSERT_EQ(cudaMemcpy(got.data(), d_out, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  const bool same = got == e.output;
  EXPECT_TRUE(same) << what;
}

TEST_F(CudaInteropTest, OneWorkspaceServesEverySizeUpToItsMaximum) {
  for (DType dtype : {DType::u32, DType::i64}) {
    for (Kind kind : {Kind::inclusive, Kind::exclusive, Kind::reduce}) {
      const ScanSpec spec{dtype, Op::add, kind};
      const cuda::Plan plan(spec);
      const std::size_t max_n = (std::size_t{1} << 24) + 7;
      const std::size_t bytes = plan.workspace_bytes(max_n);
      Memory workspace(bytes), in(max_n * 8), out(max_n * 8);
      CUDA_OK(cudaMemset(workspace.p, 0, bytes));
      // Sizes up and down, on the one workspace: each run finds the other half where the
      // run before left it, whatever either's n.
      for (std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{4097}, max_n,
                            std::size_t{1} << 20, std::size_t{70001}, max_n - 1, std::size_t{3}}) {
        const std::uint64_t seed = next_seed();
        const std::optional<Value> init =
            kind == Kind::exclusive
                ? std::optional(reference::visit(
                      dtype, [](auto t) { return Value::of(static_cast<decltype(t)>(7)); }))
                : std::nullopt;
        const Expected e = expected(spec, n, seed, init);
        CUDA_OK(cudaMemcpy(in.p, e.input.data(), e.input.size(), cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemset(out.p, 0xA5, max_n * 8));
        plan.enqueue(in.p, out.p, n, nullptr, workspace.p, bytes, init);
        CUDA_OK(cudaDeviceSynchronize());
        expect_output(e, out.p,
                      std::string(to_string(dtype)) + " " + std::string(to_string(kind)) +
                          " n=" + std::to_string(n) + " seed=" + std::to_string(seed));
      }
    }
  }
}

TEST_F(CudaInteropTest, InitFromDeviceMemory) {
  const ScanSpec spec{DType::u64, Op::bit_xor, Kind::exclusive};
  const cuda::Plan plan(spec);
  const std::size_t n = 300007;
  const std::size_t bytes = plan.workspace_bytes(n);
  Memory workspace(bytes), in(n * 8), out(n * 8), init(8);
  CUDA_OK(cudaMemset(workspace.p, 0, bytes));
  const std::uint64_t init_value = 0x0123456789ABCDEFull, seed = next_seed();
  CUDA_OK(cudaMemcpy(init.p, &init_value, 8, cudaMemcpyHostToDevice));
  const Expected e = expected(spec, n, seed, Value::of(init_value));
  CUDA_OK(cudaMemcpy(in.p, e.input.data(), e.input.size(), cudaMemcpyHostToDevice));
  plan.enqueue(in.p, out.p, n, nullptr, workspace.p, bytes, static_cast<const void*>(init.p));
  CUDA_OK(cudaDeviceSynchronize());
  expect_output(e, out.p, "device init, seed=" + std::to_string(seed));
}

// The point of keeping the turn on the device: a graph recorded once and replayed stays
// exact, run after run, each time on new input.
TEST_F(CudaInteropTest, CapturedGraphReplayedOnNewInputs) {
  for (Kind kind : {Kind::inclusive, Kind::reduce}) {
    const ScanSpec spec{DType::u32, Op::add, kind};
    const cuda::Plan plan(spec);
    const std::size_t n = (std::size_t{1} << 22) + 3;
    const std::size_t bytes = plan.workspace_bytes(n);
    Memory workspace(bytes), in(n * 4), out(n * 4);
    cudaStream_t stream = nullptr;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDA_OK(cudaMemsetAsync(workspace.p, 0, bytes, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    cudaGraph_t graph = nullptr;
    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    plan.enqueue(in.p, out.p, n, stream, workspace.p, bytes);
    CUDA_OK(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec = nullptr;
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (int replay = 0; replay < 5; ++replay) {
      const std::uint64_t seed = next_seed();
      const Expected e = expected(spec, n, seed, std::nullopt);
      CUDA_OK(
          cudaMemcpyAsync(in.p, e.input.data(), e.input.size(), cudaMemcpyHostToDevice, stream));
      CUDA_OK(cudaMemsetAsync(out.p, 0xA5, n * 4, stream));
      CUDA_OK(cudaGraphLaunch(exec, stream));
      CUDA_OK(cudaStreamSynchronize(stream));
      expect_output(e, out.p,
                    std::string(to_string(kind)) + " replay " + std::to_string(replay) +
                        " seed=" + std::to_string(seed));
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
  }
}

TEST_F(CudaInteropTest, TwoStreamsWithTheirOwnWorkspacesAtOnce) {
  const ScanSpec spec{DType::i32, Op::add, Kind::inclusive};
  const cuda::Plan plan(spec);
  const std::size_t n = (std::size_t{1} << 23) + 11;
  const std::size_t bytes = plan.workspace_bytes(n);
  Memory w0(bytes), w1(bytes), in0(n * 4), in1(n * 4), out0(n * 4), out1(n * 4);
  cudaStream_t s0 = nullptr, s1 = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
  CUDA_OK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CUDA_OK(cudaMemset(w0.p, 0, bytes));
  CUDA_OK(cudaMemset(w1.p, 0, bytes));
  const std::uint64_t seed0 = next_seed(), seed1 = next_seed();
  const Expected e0 = expected(spec, n, seed0, std::nullopt);
  const Expected e1 = expected(spec, n, seed1, std::nullopt);
  CUDA_OK(cudaMemcpy(in0.p, e0.input.data(), e0.input.size(), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(in1.p, e1.input.data(), e1.input.size(), cudaMemcpyHostToDevice));
  for (int round = 0; round < 20; ++round) {
    plan.enqueue(in0.p, out0.p, n, s0, w0.p, bytes);
    plan.enqueue(in1.p, out1.p, n, s1, w1.p, bytes);
  }
  CUDA_OK(cudaDeviceSynchronize());
  expect_output(e0, out0.p, "stream 0 seed=" + std::to_string(seed0));
  expect_output(e1, out1.p, "stream 1 seed=" + std::to_string(seed1));
  cudaStreamDestroy(s0);
  cudaStreamDestroy(s1);
}

TEST_F(CudaInteropTest, OneCallHelpersGrowTheirWorkspace) {
  for (std::size_t n : {std::size_t{1000}, std::size_t{1} << 22, std::size_t{77}}) {
    const std::uint64_t seed = next_seed();
    const ScanSpec spec{DType::u32, Op::max, Kind::inclusive};
    const Expected e = expected(spec, n, seed, std::nullopt);
    Memory in(n * 4), out(n * 4);
    CUDA_OK(cudaMemcpy(in.p, e.input.data(), e.input.size(), cudaMemcpyHostToDevice));
    cuda::inclusive_scan(static_cast<const std::uint32_t*>(in.p),
                         static_cast<std::uint32_t*>(out.p), n, Op::max);
    CUDA_OK(cudaDeviceSynchronize());
    expect_output(e, out.p, "helper n=" + std::to_string(n) + " seed=" + std::to_string(seed));
  }
}

// Pointers aligned only to the element size (DESIGN 3a), on either side, each kind: the
// element path, with nothing written outside the output.
TEST_F(CudaInteropTest, PointersAlignedOnlyToTheElementSize) {
  for (DType dtype : {DType::u32, DType::u64}) {
    for (Kind kind : {Kind::inclusive, Kind::exclusive, Kind::reduce}) {
      const ScanSpec spec{dtype, Op::add, kind};
      const cuda::Plan plan(spec);
      const std::size_t element = size_of(dtype), n = 300001;
      const std::size_t bytes = plan.workspace_bytes(n);
      Memory workspace(bytes), in((n + 4) * element), out((n + 4) * element);
      CUDA_OK(cudaMemset(workspace.p, 0, bytes));
      using Shifts = std::pair<std::size_t, std::size_t>;
      for (auto [in_shift, out_shift] : {Shifts{1, 0}, Shifts{0, 3}, Shifts{1, 1}}) {
        const std::uint64_t seed = next_seed();
        const Expected e = expected(spec, n, seed, std::nullopt);
        auto* x = static_cast<std::byte*>(in.p) + in_shift * element;
        auto* y = static_cast<std::byte*>(out.p) + out_shift * element;
        CUDA_OK(cudaMemcpy(x, e.input.data(), e.input.size(), cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemset(out.p, 0xA5, (n + 4) * element));
        plan.enqueue(x, y, n, nullptr, workspace.p, bytes);
        CUDA_OK(cudaDeviceSynchronize());
        const std::string what = std::string(to_string(dtype)) + " " +
                                 std::string(to_string(kind)) + " in +" + std::to_string(in_shift) +
                                 " out +" + std::to_string(out_shift) +
                                 " seed=" + std::to_string(seed);
        expect_output(e, y, what);
        std::vector<std::byte> all((n + 4) * element);
        CUDA_OK(cudaMemcpy(all.data(), out.p, all.size(), cudaMemcpyDeviceToHost));
        for (std::size_t i = 0; i < all.size(); ++i) {
          const bool inside = i >= out_shift * element && i < out_shift * element + e.output.size();
          if (!inside) {
            ASSERT_EQ(all[i], std::byte{0xA5}) << what << ": byte " << i << " written";
          }
        }
      }
    }
  }
}

TEST_F(CudaInteropTest, RefusesWhatItCannotDo) {
  const cuda::Plan plan({DType::u32, Op::add, Kind::inclusive});
  const std::size_t n = 1 << 16;
  const std::size_t bytes = plan.workspace_bytes(n);
  Memory workspace(bytes), in(n * 4 + 16), out(n * 4 + 16);
  CUDA_OK(cudaMemset(workspace.p, 0, bytes));
  auto* in_bytes = static_cast<std::byte*>(in.p);
  EXPECT_THROW(plan.enqueue(in.p, in.p, n, nullptr, workspace.p, bytes), UsageError);  // in place
  EXPECT_THROW(plan.enqueue(in.p, in_bytes + 64, n, nullptr, workspace.p, bytes), UsageError);
  EXPECT_THROW(plan.enqueue(in_bytes + 2, out.p, n, nullptr, workspace.p, bytes), UsageError);
  EXPECT_THROW(plan.enqueue(in.p, out.p, n, nullptr, workspace.p, bytes / 2), UsageError);
  EXPECT_THROW(plan.enqueue(in.p, out.p, n, nullptr, nullptr, bytes), UsageError);
  EXPECT_THROW(plan.enqueue(in.p, out.p, n, nullptr, workspace.p, bytes, Value::of(1.0f)),
               UsageError);  // init of another type
  EXPECT_THROW(cuda::Plan({DType::u32, Op::add, Kind::inclusive, Algorithm::csdl}), UsageError);
  EXPECT_THROW(cuda::Plan({DType::f32, Op::bit_xor, Kind::inclusive}), UsageError);
  EXPECT_THROW(cuda::Plan({DType::u32, Op::add, Kind::inclusive}, {}, 1000), UsageError);
  // A reduction of nothing is its init value.
  const cuda::Plan reduce({DType::u32, Op::add, Kind::reduce});
  plan.enqueue(in.p, out.p, 0, nullptr, workspace.p, bytes);  // nothing at all
  reduce.enqueue(in.p, out.p, 0, nullptr, nullptr, 0, Value::of(std::uint32_t{42}));
  std::uint32_t got = 0;
  CUDA_OK(cudaMemcpy(&got, out.p, 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, 42u);
}

// CSR offsets with segment lengths drawn from `lengths` (0 for empty segments) up to n.
std::vector<std::int64_t> random_offsets(std::uint64_t seed, std::int64_t n,
                                         const std::vector<std::int64_t>& lengths) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> offsets{0};
  while (offsets.back() < n) {
    offsets.push_back(std::min(n, offsets.back() + lengths[rng() % lengths.size()]));
  }
  return offsets;
}

// enqueue_segments of random input over `offsets` (device memory), checked element by
// element against the reference, the output poisoned first.
void expect_segments(const ScanSpec& spec, const std::vector<std::int64_t>& offsets,
                     std::optional<Value> init, const std::string& what) {
  const cuda::Plan plan(spec);
  const auto n = static_cast<std::size_t>(offsets.back());
  const std::size_t segments = offsets.size() - 1;
  const std::size_t element = size_of(spec.dtype);
  const std::size_t out_n = spec.kind == Kind::reduce ? segments : n;
  const std::vector<std::byte> input = reference::random_input(spec.dtype, spec.op, n, next_seed());
  const std::size_t bytes = plan.workspace_bytes(n);
  Memory in(n * element), out(out_n * element), d_offsets(offsets.size() * 8), workspace(bytes);
  CUDA_OK(cudaMemset(workspace.p, 0, bytes));
  CUDA_OK(cudaMemcpy(in.p, input.data(), input.size(), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(d_offsets.p, offsets.data(), offsets.size() * 8, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(out.p, 0xAB, out_n * element));
  plan.enqueue_segments(in.p, out.p, n, static_cast<const std::int64_t*>(d_offsets.p), segments,
                        nullptr, workspace.p, bytes, init);
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<std::byte> got(out_n * element);
  CUDA_OK(cudaMemcpy(got.data(), out.p, got.size(), cudaMemcpyDeviceToHost));
  reference::visit(spec.dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto wrong = reference::first_mismatch_segments<T>(
        spec.op, spec.kind, std::span(reinterpret_cast<const T*>(input.data()), n), offsets,
        init ? std::optional<T>(init->as<T>()) : std::nullopt,
        std::span(reinterpret_cast<const T*>(got.data()), out_n));
    EXPECT_FALSE(wrong) << what << ": first wrong output " << wrong.value_or(0) << " of " << out_n
                        << " (" << segments << " segments of " << n << " elements)";
  });
}

TEST_F(CudaInteropTest, SegmentsFromDeviceOffsets) {
  const std::vector<std::int64_t> mixed{0, 1, 5, 31, 300, 4095, 4097, 70000};
  for (const Kind kind : {Kind::inclusive, Kind::exclusive, Kind::reduce}) {
    for (const ScanSpec spec :
         {ScanSpec{DType::u32, Op::add, kind}, ScanSpec{DType::f32, Op::add, kind},
          ScanSpec{DType::i64, Op::max, kind}}) {
      const std::uint64_t seed = next_seed();
      const std::string what =
          std::string(to_string(spec.dtype)) + " " + std::string(to_string(spec.op)) + " " +
          std::string(to_string(kind)) + " offsets seed=" + std::to_string(seed);
      expect_segments(spec, random_offsets(seed, 1000003, mixed), std::nullopt, what);
      expect_segments(spec, random_offsets(seed + 1, 20011, {0, 0, 1, 2, 7}), std::nullopt,
                      what + " (short and empty)");
    }
  }
  const ScanSpec sum{DType::u32, Op::add, Kind::inclusive};
  expect_segments(sum, {0, 123457}, std::nullopt, "one segment");
  expect_segments(sum, {0, 0, 0, 5000, 5000, 9001, 9001, 9001}, Value::of(std::uint32_t{7}),
                  "empty segments first, inside and last, init 7");
  expect_segments({DType::u32, Op::add, Kind::reduce}, {0, 0, 0, 0}, Value::of(std::uint32_t{9}),
                  "three empty segments: each reduces to init");
  expect_segments({DType::i64, Op::add, Kind::reduce}, random_offsets(next_seed(), 300007, mixed),
                  Value::of(std::int64_t{-3}), "i64 reduce, init -3");
}

TEST_F(CudaInteropTest, SegmentRefusals) {
  const cuda::Plan plan({DType::u32, Op::add, Kind::inclusive});
  const std::size_t n = 4096;
  const std::size_t bytes = plan.workspace_bytes(n);
  Memory workspace(bytes), in(n * 4), out(n * 4), offsets(64);
  CUDA_OK(cudaMemset(workspace.p, 0, bytes));
  const std::int64_t two[] = {0, 100, static_cast<std::int64_t>(n)};
  CUDA_OK(cudaMemcpy(offsets.p, two, sizeof two, cudaMemcpyHostToDevice));
  const auto* d_offsets = static_cast<const std::int64_t*>(offsets.p);
  EXPECT_THROW(plan.enqueue_segments(in.p, out.p, n, nullptr, 2, nullptr, workspace.p, bytes),
               UsageError);
  EXPECT_THROW(plan.enqueue_segments(in.p, out.p, n,
                                     reinterpret_cast<const std::int64_t*>(
                                         static_cast<const std::byte*>(offsets.p) + 4),
                                     2, nullptr, workspace.p, bytes),
               UsageError);  // misaligned offsets
  EXPECT_THROW(plan.enqueue_segments(in.p, out.p, n, d_offsets, 0, nullptr, workspace.p, bytes),
               UsageError);  // n elements in no segment
  EXPECT_THROW(plan.enqueue_segments(in.p, out.p, std::uint64_t{1} << 32, d_offsets, 2, nullptr,
                                     workspace.p, bytes),
               UsageError);
  EXPECT_THROW(plan.enqueue_segments(in.p, in.p, n, d_offsets, 2, nullptr, workspace.p, bytes),
               UsageError);  // in place
  EXPECT_THROW(plan.enqueue_segments(in.p, offsets.p, n, d_offsets, 2, nullptr, workspace.p, bytes),
               UsageError);  // output over the offsets
  EXPECT_THROW(cuda::Plan({DType::u32, Op::add, Kind::inclusive, Algorithm::rts})
                   .enqueue_segments(in.p, out.p, n, d_offsets, 2, nullptr, workspace.p, bytes),
               UsageError);
  CUDA_OK(cudaDeviceSynchronize());  // the checks that did launch found the offsets valid
}

// The child of InvalidDeviceOffsetsStopTheRunLoudly: a segmented scan on offsets that
// decrease, then the stream's synchronisation. The trap may already have fired when the
// scan's launch asks the runtime something (an exception), or show at the synchronisation:
// either becomes exit status 3.
[[noreturn]] void scan_bad_offsets_and_exit() {
  try {
    const cuda::Plan plan({DType::u32, Op::add, Kind::inclusive});
    const std::size_t n = 20;
    const std::int64_t bad[] = {0, 10, 5, 20};  // decreasing at index 2
    void *in = nullptr, *out = nullptr, *offsets = nullptr, *workspace = nullptr;
    const std::size_t bytes = plan.workspace_bytes(n);
    cudaMalloc(&in, n * 4);
    cudaMalloc(&out, n * 4);
    cudaMalloc(&offsets, sizeof bad);
    cudaMalloc(&workspace, bytes);
    cudaMemset(workspace, 0, bytes);
    cudaMemset(in, 0, n * 4);
    cudaMemcpy(offsets, bad, sizeof bad, cudaMemcpyHostToDevice);
    plan.enqueue_segments(in, out, n, static_cast<const std::int64_t*>(offsets), 3, nullptr,
                          workspace, bytes);
    const cudaError_t status = cudaDeviceSynchronize();
    std::fprintf(stderr, "stopped: %s\n", cudaGetErrorName(status));
    std::exit(status == cudaSuccess ? 0 : 3);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stopped: %s\n", e.what());
    std::exit(3);
  }
}

// Offsets that are not CSR stop the run on the device (a trap), which loses the CUDA
// context: in a child process of its own, so the other tests keep theirs.
TEST_F(CudaInteropTest, InvalidDeviceOffsetsStopTheRunLoudly) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(scan_bad_offsets_and_exit(), ::testing::ExitedWithCode(3),
              "stopped: .*(cuda|CUDA|launch failure)");
}

TEST_F(CudaInteropTest, TheCAbiScansSegmentsOnTheCallersStream) {
  gpuscan_device device = nullptr;
  ASSERT_EQ(gpuscan_device_open_cuda(0, &device), GPUSCAN_OK) << gpuscan_last_error();
  const std::vector<std::int64_t> offsets =
      random_offsets(next_seed(), 77777, {0, 1, 33, 1000, 5000});
  const auto n = static_cast<std::size_t>(offsets.back());
  const std::size_t segments = offsets.size() - 1;
  const std::vector<std::byte> input = reference::random_input(DType::u32, Op::add, n, next_seed());
  Memory in(n * 4), out(segments * 4), d_offsets(offsets.size() * 8);
  CUDA_OK(cudaMemcpy(in.p, input.data(), input.size(), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(d_offsets.p, offsets.data(), offsets.size() * 8, cudaMemcpyHostToDevice));
  cudaStream_t stream = nullptr;
  CUDA_OK(cudaStreamCreate(&stream));
  const std::uint32_t init = 1;
  EXPECT_EQ(gpuscan_cuda_scan_segments(device, GPUSCAN_U32, GPUSCAN_ADD, GPUSCAN_REDUCE, in.p,
                                       out.p, n, static_cast<const std::int64_t*>(d_offsets.p),
                                       segments, &init, stream),
            GPUSCAN_OK)
      << gpuscan_last_error();
  CUDA_OK(cudaStreamSynchronize(stream));
  std::vector<std::uint32_t> got(segments);
  CUDA_OK(cudaMemcpy(got.data(), out.p, segments * 4, cudaMemcpyDeviceToHost));
  const std::span x(reinterpret_cast<const std::uint32_t*>(input.data()), n);
  for (std::size_t s = 0; s < segments; ++s) {
    std::uint32_t want = init;
    for (auto i = offsets[s]; i < offsets[s + 1]; ++i) want += x[static_cast<std::size_t>(i)];
    ASSERT_EQ(got[s], want) << "segment " << s << " of " << segments;
  }
  EXPECT_EQ(gpuscan_cuda_scan_segments(device, GPUSCAN_U32, GPUSCAN_ADD, GPUSCAN_REDUCE, in.p,
                                       out.p, n, nullptr, segments, &init, stream),
            GPUSCAN_USAGE_ERROR);
  EXPECT_NE(std::string(gpuscan_last_error()).find("d_offsets"), std::string::npos);
  cudaStreamDestroy(stream);
  gpuscan_device_close(device);
}

TEST_F(CudaInteropTest, TheCAbiScansOnTheCallersStream) {
  gpuscan_device device = nullptr;
  ASSERT_EQ(gpuscan_device_open_cuda(0, &device), GPUSCAN_OK) << gpuscan_last_error();
  EXPECT_EQ(gpuscan_device_backend(device), GPUSCAN_BACKEND_CUDA);
  const std::size_t n = 1234567;
  const std::uint64_t seed = next_seed();
  const ScanSpec spec{DType::i64, Op::add, Kind::exclusive};
  const std::int64_t init = -5;
  const Expected e = expected(spec, n, seed, Value::of(init));
  Memory in(n * 8), out(n * 8);
  CUDA_OK(cudaMemcpy(in.p, e.input.data(), e.input.size(), cudaMemcpyHostToDevice));
  cudaStream_t stream = nullptr;
  CUDA_OK(cudaStreamCreate(&stream));
  EXPECT_EQ(gpuscan_cuda_scan(device, GPUSCAN_I64, GPUSCAN_ADD, GPUSCAN_EXCLUSIVE, in.p, out.p, n,
                              &init, stream),
            GPUSCAN_OK)
      << gpuscan_last_error();
  CUDA_OK(cudaStreamSynchronize(stream));
  expect_output(e, out.p, "C ABI seed=" + std::to_string(seed));
  EXPECT_EQ(gpuscan_cuda_scan(device, GPUSCAN_I64, GPUSCAN_ADD, GPUSCAN_EXCLUSIVE, in.p, in.p, n,
                              nullptr, stream),
            GPUSCAN_USAGE_ERROR);
  EXPECT_NE(std::string(gpuscan_last_error()).find("overlap"), std::string::npos);
  cudaStreamDestroy(stream);
  gpuscan_device_close(device);
}

TEST_F(CudaInteropTest, TheCAbiNamesTheDeviceOfAPointer) {
  int count = 0;
  CUDA_OK(cudaGetDeviceCount(&count));
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUDA_OK(cudaSetDevice(ordinal));
    Memory memory(64);
    int got = -2;
    EXPECT_EQ(gpuscan_cuda_pointer_device(static_cast<char*>(memory.p) + 4, &got), GPUSCAN_OK)
        << gpuscan_last_error();
    EXPECT_EQ(got, ordinal);
  }
  CUDA_OK(cudaSetDevice(0));
  std::vector<int> host(4);
  int got = -2;
  EXPECT_EQ(gpuscan_cuda_pointer_device(host.data(), &got), GPUSCAN_USAGE_ERROR);
  EXPECT_EQ(got, -1);
  EXPECT_NE(std::string(gpuscan_last_error()).find("not CUDA device memory"), std::string::npos)
      << gpuscan_last_error();
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // the failed lookup left no error behind
}

}  // namespace
}  // namespace gpuscan
