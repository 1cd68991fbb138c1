// The compaction family (DESIGN 3e) on the caller's CUDA memory and streams, as gpuscan/cuda.hpp
// runs the scan:
//
//   gpuscan::cuda::CompactPlan plan({gpuscan::Compaction::select_if, gpuscan::DType::u32,
//                                    gpuscan::Predicate::lt});
//   std::size_t bytes = plan.workspace_bytes(max_n);
//   void* workspace;  cudaMalloc(&workspace, bytes);  cudaMemsetAsync(workspace, 0, bytes, s);
//   plan.enqueue(d_in, d_out, d_count, n, s, workspace, bytes, gpuscan::Value::of(100u));
//
// The count of kept elements is written as one uint64 to d_count on the device, so nothing
// waits for the host: a later kernel on the stream may read it. An enqueue allocates nothing,
// synchronises nothing and keeps no host-side state (runs may be captured in a CUDA graph).
//
// Contract (as gpuscan::cuda::Plan's):
// - The workspace is zeroed once before its first use and each run leaves it ready for the
//   next; runs that share it are ordered (one stream, or events); pass the same
//   workspace_bytes every time.
// - Pointers are device memory aligned to their element size (d_count: 8 bytes). Outputs
//   hold n elements each (the kept ones go first; what follows the count is left as it was).
//   No output may overlap an input or another output, except in place: select-if,
//   select-flagged and unique take d_out == d_in (the kept elements overwrite the start of
//   the input, the rest stays as it was; one kernel run, docs/protocol.md "In-place
//   compaction"), with the built-in predicates.
// - Any n: inputs longer than one kernel run takes go in chunks, one after the other on the
//   stream, the running count carried in the workspace (docs/protocol.md, "Compaction in
//   chunks").
// - Failures throw gpuscan::UsageError (a bad request) or gpuscan::DeviceError.
//
// With any device functor as select-if's or partition's predicate: gpuscan/cuda_compaction.cuh.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "gpuscan/compactor.hpp"
#include "gpuscan/scanner.hpp"
#include "gpuscan/types.hpp"

namespace gpuscan::cuda {

// What a compaction kernel's launch takes (the library's internals).
struct CompactArgs;
struct ChainArgs;

namespace internal {
class CompactPlanImpl;
// A launch of a compaction kernel compiled in the caller's translation unit, with the
// caller's device functor as select-if's or partition's predicate: what
// gpuscan/cuda_compaction.cuh hands the plan (use that header's functions).
using CompactionKernel = std::function<void(const CompactArgs&, ChainArgs, cudaStream_t)>;
}  // namespace internal

// What a compaction writes: `out` (the kept or selected elements, or the run values),
// `second` (partition's rejected elements, run-length encoding's uint64 lengths; else null)
// and `count`.
struct CompactOutputs {
  void* out = nullptr;
  void* second = nullptr;
  std::uint64_t* count = nullptr;
};

class CompactPlan {
 public:
  // For the CUDA device `device` (-1: the current one). spec.algorithm must be csdldf (csdl
  // needs forward progress and is the benchmark's).
  explicit CompactPlan(CompactSpec spec, Tuning tuning = {}, int device = -1);
  ~CompactPlan();
  CompactPlan(CompactPlan&&) noexcept;
  CompactPlan& operator=(CompactPlan&&) noexcept;

  // Bytes of workspace that runs of up to max_n elements need.
  std::size_t workspace_bytes(std::uint64_t max_n) const;

  // select_if, select_flagged, unique: the kept elements of d_in, in order, to d_out; their
  // number to *d_count. `constant` (select_if: the spec's dtype) is what the predicate
  // compares with; d_flags (select_flagged): n flags of the spec's flags dtype.
  void enqueue(const void* d_in, void* d_out, std::uint64_t* d_count, std::uint64_t n,
               cudaStream_t stream, void* workspace, std::size_t workspace_bytes,
               std::optional<Value> constant = {}, const void* d_flags = nullptr) const;
  // partition (with `constant`) and partition_flagged (with d_flags): the selected elements in
  // order to d_selected, the others in order to d_rejected, the number selected to *d_count.
  void enqueue_partition(const void* d_in, void* d_selected, void* d_rejected,
                         std::uint64_t* d_count, std::uint64_t n, cudaStream_t stream,
                         void* workspace, std::size_t workspace_bytes,
                         std::optional<Value> constant = {}, const void* d_flags = nullptr) const;
  // run_length_encode: each run's first element to d_values, its length to d_lengths, the
  // number of runs to *d_count.
  void enqueue_run_length_encode(const void* d_in, void* d_values, std::uint64_t* d_lengths,
                                 std::uint64_t* d_count, std::uint64_t n, cudaStream_t stream,
                                 void* workspace, std::size_t workspace_bytes) const;

  // select_if or partition with `kernel` in place of the built-in predicate's kernels
  // (gpuscan/cuda_compaction.cuh: enqueue_select_if, enqueue_partition); d_rejected in
  // outputs.second.
  void enqueue_kernel(const internal::CompactionKernel& kernel, const void* d_in,
                      const CompactOutputs& outputs, std::uint64_t n, cudaStream_t stream,
                      void* workspace, std::size_t workspace_bytes) const;

  const CompactSpec& spec() const;
  int device() const;

 private:
  std::unique_ptr<internal::CompactPlanImpl> impl_;
};

// One-call compactions on the current device, with a workspace per device, spec and stream
// that the library keeps (grown when a larger n comes; growing synchronises that stream once).
// Thread-safe.
void compact(const CompactSpec& spec, const void* d_in, const CompactOutputs& outputs,
             std::uint64_t n, cudaStream_t stream = nullptr, std::optional<Value> constant = {},
             const void* d_flags = nullptr);
// The same for select_if or partition with the caller's kernel (gpuscan/cuda_compaction.cuh).
void compact(const internal::CompactionKernel& kernel, const CompactSpec& spec, const void* d_in,
             const CompactOutputs& outputs, std::uint64_t n, cudaStream_t stream = nullptr);

template <class T>
void select_if(const T* d_in, T* d_out, std::uint64_t* d_count, std::uint64_t n,
               Predicate predicate, T constant, cudaStream_t stream = nullptr) {
  compact({Compaction::select_if, dtype_of<T>(), predicate}, d_in, {d_out, nullptr, d_count}, n,
          stream, Value::of(constant));
}

// Flags of any integer type; an element is kept where its flag is nonzero.
template <class T, class F>
void select_flagged(const T* d_in, const F* d_flags, T* d_out, std::uint64_t* d_count,
                    std::uint64_t n, cudaStream_t stream = nullptr) {
  compact({Compaction::select_flagged, dtype_of<T>(), Predicate::lt, dtype_of<F>()}, d_in,
          {d_out, nullptr, d_count}, n, stream, std::nullopt, d_flags);
}

template <class T>
void unique(const T* d_in, T* d_out, std::uint64_t* d_count, std::uint64_t n,
            cudaStream_t stream = nullptr) {
  compact({Compaction::unique, dtype_of<T>()}, d_in, {d_out, nullptr, d_count}, n, stream);
}

template <class T>
void partition(const T* d_in, T* d_selected, T* d_rejected, std::uint64_t* d_count, std::uint64_t n,
               Predicate predicate, T constant, cudaStream_t stream = nullptr) {
  compact({Compaction::partition, dtype_of<T>(), predicate}, d_in,
          {d_selected, d_rejected, d_count}, n, stream, Value::of(constant));
}

template <class T, class F>
void partition_flagged(const T* d_in, const F* d_flags, T* d_selected, T* d_rejected,
                       std::uint64_t* d_count, std::uint64_t n, cudaStream_t stream = nullptr) {
  compact({Compaction::partition_flagged, dtype_of<T>(), Predicate::lt, dtype_of<F>()}, d_in,
          {d_selected, d_rejected, d_count}, n, stream, std::nullopt, d_flags);
}

template <class T>
void run_length_encode(const T* d_in, T* d_values, std::uint64_t* d_lengths, std::uint64_t* d_count,
                       std::uint64_t n, cudaStream_t stream = nullptr) {
  compact({Compaction::run_length_encode, dtype_of<T>()}, d_in, {d_values, d_lengths, d_count}, n,
          stream);
}

}  // namespace gpuscan::cuda
