// Scans on the caller's CUDA memory and streams (DESIGN: "On the caller's memory"); the
// compaction family on them: gpuscan/cuda_compaction.hpp.
//
//   gpuscan::cuda::Plan plan({gpuscan::DType::u32, gpuscan::Op::add, gpuscan::Kind::inclusive});
//   std::size_t bytes = plan.workspace_bytes(max_n);
//   void* workspace;  cudaMalloc(&workspace, bytes);  cudaMemsetAsync(workspace, 0, bytes, s);
//   plan.enqueue(d_in, d_out, n, s, workspace, bytes);         // any n <= max_n, any stream
//
// An enqueue allocates nothing, synchronises nothing with the host and keeps no host-side
// state: everything a run needs between runs (which half of the tile state is clean) lives
// in the workspace, so enqueues may be captured in a CUDA graph and the graph replayed.
//
// Contract:
// - The workspace is zeroed once before its first use; each run leaves it ready for the next.
//   Runs that share a workspace must be ordered (one stream, or events): two at once corrupt
//   each other. Different workspaces are independent. Pass a workspace with the same
//   workspace_bytes every time (its layout follows from that size); to resize, zero it again.
// - d_in and d_out are device pointers aligned to the element size (others are refused;
//   data that is not 16-byte aligned moves element by element, slower), and must not
//   overlap (in place is refused: a fallback re-reads a predecessor's input, which that
//   predecessor may already have overwritten).
// - A Plan is immutable after construction: any number of threads may enqueue through one
//   Plan at once (each with its own workspace).
// - Failures throw gpuscan::UsageError (a bad request) or gpuscan::DeviceError; a kernel
//   that fails later is reported by CUDA on the stream, as for any kernel.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "gpuscan/scanner.hpp"
#include "gpuscan/types.hpp"

namespace gpuscan::cuda {

namespace internal {
class PlanImpl;
}

class Plan {
 public:
  // For the CUDA device `device` (-1: the current one). spec.algorithm must be csdldf or
  // rts (csdl needs forward progress and is the benchmark's).
  explicit Plan(ScanSpec spec, Tuning tuning = {}, int device = -1);
  ~Plan();
  Plan(Plan&&) noexcept;
  Plan& operator=(Plan&&) noexcept;

  // Bytes of workspace that scans of up to max_n elements need.
  std::size_t workspace_bytes(std::uint64_t max_n) const;

  // Enqueues out = scan(in) of n elements on `stream`. init: a host value of the spec's
  // dtype (default: the operator's identity). For Kind::reduce, d_out receives one element.
  void enqueue(const void* d_in, void* d_out, std::uint64_t n, cudaStream_t stream, void* workspace,
               std::size_t workspace_bytes, std::optional<Value> init = {}) const;
  // A batched scan (DESIGN 3f): `rows` rows of `row_length` elements, row after row, each
  // scanned on its own in one pass; init applies at each row's start. For Kind::reduce,
  // d_out receives one element per row. workspace_bytes(rows * row_length) suffices.
  void enqueue_rows(const void* d_in, void* d_out, std::uint64_t rows, std::uint64_t row_length,
                    cudaStream_t stream, void* workspace, std::size_t workspace_bytes,
                    std::optional<Value> init = {}) const;
  // A segmented scan (DESIGN 3f, CSR offsets): segment s is elements [d_offsets[s],
  // d_offsets[s + 1]) of the n at d_in, each segment scanned on its own in one pass; init
  // applies at each segment's start. d_offsets: `segments` + 1 int64 values in device memory,
  // 0 first, n last, not decreasing (empty segments allowed), read when the run executes.
  // For Kind::reduce, d_out receives one element per segment (init for an empty one).
  // n and segments below 2^32; workspace_bytes(n) suffices. The offsets are checked on the
  // device before the scan reads them: invalid ones stop the run with a device-side trap
  // (the device prints the first bad index; the stream's next synchronisation returns an
  // error, and the CUDA context is lost, as with a failed device assert) rather than
  // giving wrong values.
  void enqueue_segments(const void* d_in, void* d_out, std::uint64_t n,
                        const std::int64_t* d_offsets, std::uint64_t segments, cudaStream_t stream,
                        void* workspace, std::size_t workspace_bytes,
                        std::optional<Value> init = {}) const;
  // The same with init read on the device, when the run starts, from d_init (one element).
  void enqueue(const void* d_in, void* d_out, std::uint64_t n, cudaStream_t stream, void* workspace,
               std::size_t workspace_bytes, const void* d_init) const;

  const ScanSpec& spec() const;
  int device() const;

 private:
  std::unique_ptr<internal::PlanImpl> impl_;
};

// One-call scans with a workspace per device and stream that the library keeps (grown when
// a larger n comes; growing synchronises that stream once, so do it before capturing a
// graph, or use a Plan with your own workspace). Thread-safe.
void scan(const ScanSpec& spec, const void* d_in, void* d_out, std::uint64_t n,
          cudaStream_t stream = nullptr, std::optional<Value> init = {});

template <class T>
void inclusive_scan(const T* d_in, T* d_out, std::uint64_t n, Op op = Op::add,
                    cudaStream_t stream = nullptr, std::optional<T> init = {}) {
  scan({dtype_of<T>(), op, Kind::inclusive}, d_in, d_out, n, stream,
       init ? std::optional<Value>(Value::of(*init)) : std::nullopt);
}

template <class T>
void exclusive_scan(const T* d_in, T* d_out, std::uint64_t n, Op op = Op::add,
                    cudaStream_t stream = nullptr, std::optional<T> init = {}) {
  scan({dtype_of<T>(), op, Kind::exclusive}, d_in, d_out, n, stream,
       init ? std::optional<Value>(Value::of(*init)) : std::nullopt);
}

// Writes the reduction of n elements to *d_out (device memory).
template <class T>
void reduce(const T* d_in, T* d_out, std::uint64_t n, Op op = Op::add,
            cudaStream_t stream = nullptr, std::optional<T> init = {}) {
  scan({dtype_of<T>(), op, Kind::reduce}, d_in, d_out, n, stream,
       init ? std::optional<Value>(Value::of(*init)) : std::nullopt);
}

}  // namespace gpuscan::cuda
