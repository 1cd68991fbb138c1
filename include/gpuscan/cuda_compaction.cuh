// Select-if and partition with any device functor as the predicate (DESIGN 3e), on the
// caller's CUDA memory and streams. The kernel is compiled in the caller's .cu file, with the
// functor inlined, so include this header from CUDA code (nvcc) and link the CMake target
// gpuscan::cuda_kernels (the kernel sources and the nvcc options they need):
//
//   struct InRange {
//     float lo, hi;
//     __device__ bool operator()(float x) const { return lo <= x && x < hi; }
//   };
//   gpuscan::cuda::select_if(d_in, d_out, d_count, n, InRange{0.25f, 0.75f}, stream);
//
//   gpuscan::cuda::CompactPlan plan({gpuscan::Compaction::partition, gpuscan::DType::f32});
//   gpuscan::cuda::enqueue_partition(plan, d_in, d_selected, d_rejected, d_count, n,
//                                    InRange{0.25f, 0.75f}, stream, workspace, bytes);
//
// The functor is a kernel argument, so trivially copyable (a struct of values; an extended
// __device__ lambda with nvcc's --extended-lambda), and it must be pure: a fallback
// recomputes a stalled tile's kept elements from its input, and must keep the same ones
// (docs/protocol.md, "Compaction"). Everything else is gpuscan/cuda_compaction.hpp's
// contract; the built-in predicates (lt, le, ...) need no CUDA code of yours.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "cuda/compaction_kernel_launch.cuh"
#include "gpuscan/cuda_compaction.hpp"
#include "gpuscan/error.hpp"

namespace gpuscan::cuda {

namespace internal {

// The launch of operation kOp's kernel for T with `pred` compiled in.
template <class T, Compaction kOp, class Pred>
CompactionKernel functor_kernel(const Pred& pred) {
  static_assert(std::is_trivially_copyable_v<Pred>,
                "the predicate is a kernel argument: it must be trivially copyable");
  return [pred](const CompactArgs& a, ChainArgs chain, cudaStream_t stream) {
    launch_plan_kernel<T, kOp>(a, chain, stream, pred);
  };
}

// Throws unless `plan` runs operation `op` on elements of T.
template <class T>
void check_functor_plan(const CompactPlan& plan, Compaction op) {
  if (plan.spec().compaction != op || plan.spec().dtype != dtype_of<T>()) {
    throw UsageError("this call runs " + std::string(to_string(op)) + " on " +
                     std::string(to_string(dtype_of<T>())) + " but the plan is " +
                     std::string(to_string(plan.spec().compaction)) + " on " +
                     std::string(to_string(plan.spec().dtype)));
  }
}

// A functor, not one of the built-in predicates (which take the overloads in
// gpuscan/cuda_compaction.hpp).
template <class Pred>
concept DeviceFunctor = !std::is_same_v<std::remove_cvref_t<Pred>, Predicate>;

}  // namespace internal

// The elements x of d_in with pred(x) true, in order, to d_out; their number to *d_count.
// A workspace per device and stream is kept for you.
template <class T, internal::DeviceFunctor Pred>
void select_if(const T* d_in, T* d_out, std::uint64_t* d_count, std::uint64_t n, Pred pred,
               cudaStream_t stream = nullptr) {
  compact(internal::functor_kernel<T, Compaction::select_if>(pred),
          {Compaction::select_if, dtype_of<T>()}, d_in, {d_out, nullptr, d_count}, n, stream);
}

// The elements with pred(x) true in order to d_selected, the others in order to d_rejected,
// the number selected to *d_count.
template <class T, internal::DeviceFunctor Pred>
void partition(const T* d_in, T* d_selected, T* d_rejected, std::uint64_t* d_count, std::uint64_t n,
               Pred pred, cudaStream_t stream = nullptr) {
  compact(internal::functor_kernel<T, Compaction::partition>(pred),
          {Compaction::partition, dtype_of<T>()}, d_in, {d_selected, d_rejected, d_count}, n,
          stream);
}

// The same on a plan's workspace (a select_if plan of T's dtype).
template <class T, internal::DeviceFunctor Pred>
void enqueue_select_if(const CompactPlan& plan, const T* d_in, T* d_out, std::uint64_t* d_count,
                       std::uint64_t n, Pred pred, cudaStream_t stream, void* workspace,
                       std::size_t workspace_bytes) {
  internal::check_functor_plan<T>(plan, Compaction::select_if);
  plan.enqueue_kernel(internal::functor_kernel<T, Compaction::select_if>(pred), d_in,
                      {d_out, nullptr, d_count}, n, stream, workspace, workspace_bytes);
}

// The same on a plan's workspace (a partition plan of T's dtype).
template <class T, internal::DeviceFunctor Pred>
void enqueue_partition(const CompactPlan& plan, const T* d_in, T* d_selected, T* d_rejected,
                       std::uint64_t* d_count, std::uint64_t n, Pred pred, cudaStream_t stream,
                       void* workspace, std::size_t workspace_bytes) {
  internal::check_functor_plan<T>(plan, Compaction::partition);
  plan.enqueue_kernel(internal::functor_kernel<T, Compaction::partition>(pred), d_in,
                      {d_selected, d_rejected, d_count}, n, stream, workspace, workspace_bytes);
}

}  // namespace gpuscan::cuda
