// Select-if and partition with device functors as predicates (gpuscan/cuda_compaction.cuh),
// compiled here as a caller's .cu file would be: one-call and on a plan's workspace, f32 and
// u64, odd sizes, in chunks, and the refusals. Random inputs (seed printed), outputs poisoned
// and checked whole. Needs a CUDA GPU; where there is none (CI) every test skips and says why.
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
#include "gpuscan/cuda_compaction.cuh"

namespace gpuscan {
namespace {

using testing::Memory;
using testing::next_seed;

using CudaFunctorTest = testing::CudaGpuTest;

// Predicates no built-in one expresses: a half-open range, and divisibility.
struct InRange {
  float lo, hi;
  __host__ __device__ bool operator()(float x) const { return lo <= x && x < hi; }
};
struct MultipleOf {
  std::uint64_t m;
  __host__ __device__ bool operator()(std::uint64_t x) const { return x % m == 0; }
};

template <class T>
struct Device {
  T* p = nullptr;
  explicit Device(std::size_t n) { EXPECT_EQ(cudaMalloc(&p, (n + 1) * sizeof(T)), cudaSuccess); }
  ~Device() { cudaFree(p); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
};

template <class T>
std::vector<T> random_input(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> x(n);
  for (T& v : x) {
    if constexpr (std::is_floating_point_v<T>) {
      v = static_cast<T>(rng() % 1000) / 1000;
    } else {
      v = rng() % 1000;
    }
  }
  return x;
}

// Runs `run(d_in, d_selected, d_rejected, d_count)` on poisoned outputs and checks the
// selected elements (and, where `partition`, the rejected ones) against pred on the host.
template <class T, class Pred, class Run>
void expect_compaction(std::size_t n, Pred pred, bool partition, Run run, const std::string& what) {
  const std::uint64_t seed = next_seed();
  const std::vector<T> x = random_input<T>(n, seed);
  std::vector<T> want, want_rejected;
  for (T v : x) (pred(v) ? want : want_rejected).push_back(v);
  Device<T> in(n), selected(n), rejected(n);
  Device<std::uint64_t> count(1);
  CUDA_OK(cudaMemcpy(in.p, x.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(selected.p, 0xA5, (n + 1) * sizeof(T)));
  CUDA_OK(cudaMemset(rejected.p, 0xA5, (n + 1) * sizeof(T)));
  CUDA_OK(cudaMemset(count.p, 0xA5, 8));
  run(in.p, selected.p, partition ? rejected.p : nullptr, count.p);
  CUDA_OK(cudaDeviceSynchronize());
  const std::string at = what + " n=" + std::to_string(n) + " seed=" + std::to_string(seed);
  std::uint64_t got_count = 0;
  CUDA_OK(cudaMemcpy(&got_count, count.p, 8, cudaMemcpyDeviceToHost));
  ASSERT_EQ(got_count, want.size()) << at;
  std::vector<T> got(n + 1);
  CUDA_OK(cudaMemcpy(got.data(), selected.p, (n + 1) * sizeof(T), cudaMemcpyDeviceToHost));
  ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(T)), 0) << at;
  std::uint64_t poison = 0xA5A5A5A5A5A5A5A5ull;
  ASSERT_EQ(std::memcmp(&got[want.size()], &poison, sizeof(T)), 0) << at << ": written past";
  if (!partition) return;
  CUDA_OK(cudaMemcpy(got.data(), rejected.p, (n + 1) * sizeof(T), cudaMemcpyDeviceToHost));
  ASSERT_EQ(std::memcmp(got.data(), want_rejected.data(), want_rejected.size() * sizeof(T)), 0)
      << at << ": rejected";
  ASSERT_EQ(std::memcmp(&got[want_rejected.size()], &poison, sizeof(T)), 0)
      << at << ": rejected written past";
}

TEST_F(CudaFunctorTest, OneCallSelectAndPartition) {
  const InRange range{0.25f, 0.75f};
  const MultipleOf third{3};
  for (std::size_t n : {std::size_t{1}, std::size_t{4097}, std::size_t{1000003}}) {
    expect_compaction<float>(
        n, range, false,
        [&](const float* in, float* out, float*, std::uint64_t* count) {
          cuda::select_if(in, out, count, n, range);
        },
        "select_if f32 range");
    expect_compaction<float>(
        n, range, true,
        [&](const float* in, float* out, float* rejected, std::uint64_t* count) {
          cuda::partition(in, out, rejected, count, n, range);
        },
        "partition f32 range");
    expect_compaction<std::uint64_t>(
        n, third, true,
        [&](const std::uint64_t* in, std::uint64_t* out, std::uint64_t* rejected,
            std::uint64_t* count) { cuda::partition(in, out, rejected, count, n, third); },
        "partition u64 multiple of 3");
  }
}

TEST_F(CudaFunctorTest, OnAPlansWorkspaceOnAStream) {
  const MultipleOf seventh{7};
  const std::size_t n = (std::size_t{1} << 22) + 5;
  cudaStream_t stream = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (Compaction op : {Compaction::select_if, Compaction::partition}) {
    const cuda::CompactPlan plan({op, DType::u64});
    const std::size_t bytes = plan.workspace_bytes(n);
    Device<std::byte> workspace(bytes);
    CUDA_OK(cudaMemset(workspace.p, 0, bytes));
    for (int round = 0; round < 2; ++round) {
      expect_compaction<std::uint64_t>(
          n, seventh, op == Compaction::partition,
          [&](const std::uint64_t* in, std::uint64_t* out, std::uint64_t* rejected,
              std::uint64_t* count) {
            if (op == Compaction::partition) {
              cuda::enqueue_partition(plan, in, out, rejected, count, n, seventh, stream,
                                      workspace.p, bytes);
            } else {
              cuda::enqueue_select_if(plan, in, out, count, n, seventh, stream, workspace.p, bytes);
            }
            EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
          },
          std::string(to_string(op)) + " on a plan, round " + std::to_string(round));
    }
  }
  cudaStreamDestroy(stream);
}

// Chunks of one tile (a test hook): the functor's kernel carries the count as the library's.
TEST_F(CudaFunctorTest, InChunks) {
  const InRange range{0.1f, 0.6f};
  int device = 0;
  CUDA_OK(cudaGetDevice(&device));
  const cuda::internal::CompactPlanImpl plan({Compaction::partition, DType::f32},
                                             testing::Options{.chunk_elements = 1}, device);
  const std::size_t n = 200003;
  const std::size_t bytes = plan.workspace_bytes(n);
  Device<std::byte> workspace(bytes);
  CUDA_OK(cudaMemset(workspace.p, 0, bytes));
  const cuda::internal::CompactionKernel kernel =
      cuda::internal::functor_kernel<float, Compaction::partition>(range);
  expect_compaction<float>(
      n, range, true,
      [&](const float* in, float* out, float* rejected, std::uint64_t* count) {
        plan.enqueue(in, {out, rejected, count}, n, nullptr, workspace.p, bytes, std::nullopt,
                     nullptr, &kernel);
      },
      "partition in chunks");
}

TEST_F(CudaFunctorTest, RefusesWhatItCannotDo) {
  const InRange range{0.f, 1.f};
  const std::size_t n = 1000;
  Device<float> in(n), out(n);
  Device<std::uint64_t> count(1);
  const cuda::CompactPlan u32_plan({Compaction::select_if, DType::u32});
  const cuda::CompactPlan unique_plan({Compaction::unique, DType::f32});
  const std::size_t bytes = u32_plan.workspace_bytes(n);
  Device<std::byte> workspace(bytes);
  EXPECT_THROW(cuda::enqueue_select_if(u32_plan, in.p, out.p, count.p, n, range, nullptr,
                                       workspace.p, bytes),
               UsageError);  // a plan of another dtype
  EXPECT_THROW(cuda::enqueue_select_if(unique_plan, in.p, out.p, count.p, n, range, nullptr,
                                       workspace.p, bytes),
               UsageError);  // a plan of another operation
  // In place takes the built-in predicates only.
  EXPECT_THROW(cuda::select_if(in.p, in.p, count.p, n, range), UsageError);
  // The library's own refusals: a unique plan has no predicate for a functor's kernel.
  const cuda::internal::CompactionKernel kernel =
      cuda::internal::functor_kernel<float, Compaction::select_if>(range);
  EXPECT_THROW(unique_plan.enqueue_kernel(kernel, in.p, {out.p, nullptr, count.p}, n, nullptr,
                                          workspace.p, bytes),
               UsageError);
}

}  // namespace
}  // namespace gpuscan
