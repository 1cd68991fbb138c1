// gpuscan::cuda::Plan and the one-call scans: argument checks, the device switch, then the
// launcher on the caller's workspace.
#include "cuda/plan.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "core/options.hpp"
#include "core/reference.hpp"
#include "cuda/caller_memory.hpp"
#include "cuda/check.hpp"
#include "cuda/memory.hpp"
#include "cuda/policy.hpp"
#include "cuda/scan_launcher.hpp"

namespace gpuscan::cuda {
namespace {

// init, or the operator's identity without one; of the scan's dtype.
Value checked_init(const ScanSpec& spec, std::optional<Value> init) {
  const Value start = init.value_or(reference::identity_value(spec.dtype, spec.op));
  if (start.dtype != spec.dtype) {
    throw UsageError("init value is " + std::string(to_string(start.dtype)) + " but the scan is " +
                     std::string(to_string(spec.dtype)));
  }
  return start;
}

}  // namespace

namespace internal {

class PlanImpl {
 public:
  PlanImpl(const ScanSpec& spec, const Tuning& tuning, int device)
      : spec_(spec),
        device_(device),
        launcher_(spec.dtype, spec.op, spec.kind, spec.algorithm, policy_of(device, spec.dtype),
                  testing::Options{.tuning = tuning}) {}

  // `rows` rows of `row_length` elements (a batched scan), or with row_length 0 one scan
  // of n.
  void enqueue(const void* in, void* out, std::uint64_t n, cudaStream_t stream, void* workspace,
               std::size_t workspace_size, Value init, const void* device_init,
               std::uint64_t rows = 1, std::uint64_t row_length = 0) const {
    const bool batched = row_length != 0 || rows != 1;
    if (batched && device_init != nullptr) {
      throw UsageError("a batched scan takes its init value from the host");
    }
    const DeviceScope scope(device_);
    if (!check_run(in, out, n, batched ? rows : 1, stream, init, device_init)) return;
    if (batched && spec_.algorithm == Algorithm::rts) {
      throw UsageError("batched scans take csdldf, not rts");
    }
    check_workspace(workspace);
    const RowArgs row_layout = batched ? row_args(row_length, 0, init.bits) : RowArgs{};
    launcher_.launch(in, out, n, init, device_init, workspace, workspace_size, stream, row_layout);
  }

  // A segmented scan of n elements in `segments` segments at d_offsets (checked on the
  // device first: launch_check_segment_offsets).
  void enqueue_segments(const void* in, void* out, std::uint64_t n, const std::int64_t* offsets,
                        std::uint64_t segments, cudaStream_t stream, void* workspace,
                        std::size_t workspace_size, Value init) const {
    if (offsets == nullptr) throw UsageError("d_offsets is NULL (it holds segments + 1 offsets)");
    if (reinterpret_cast<std::uintptr_t>(offsets) % alignof(std::int64_t) != 0) {
      throw UsageError("d_offsets must be aligned to 8 bytes (int64 offsets)");
    }
    if (segments == 0 && n != 0) {
      throw UsageError(std::to_string(n) +
                       " elements in no segments: the offsets end at n, so "
                       "at least one segment holds them");
    }
    if (n >= (std::uint64_t{1} << 32) || segments >= (std::uint64_t{1} << 32)) {
      throw UsageError(
          "a segmented scan on the caller's memory takes fewer than 2^32 elements "
          "and segments (the kernels index a run in 32 bits)");
    }
    if (spec_.algorithm == Algorithm::rts) {
      throw UsageError("segmented scans take csdldf, not rts");
    }
    const std::uint64_t out_n = spec_.kind == Kind::reduce ? segments : n;
    if (overlap(offsets, (segments + 1) * sizeof(std::int64_t), out,
                out_n * size_of(spec_.dtype))) {
      throw UsageError(
          "d_offsets and d_out overlap: a fallback reads the offsets while the scan "
          "writes its output");
    }
    const DeviceScope scope(device_);
    // Checked first even where n is 0: offsets that are not all 0 then are wrong too.
    launch_check_segment_offsets(offsets, segments, n, stream);
    if (!check_run(in, out, n, segments, stream, init, nullptr)) return;
    check_workspace(workspace);
    // The kernels read entries 0..segments (the last is n: where the last segment ends).
    launcher_.launch(in, out, n, init, nullptr, workspace, workspace_size, stream,
                     segment_args(offsets, 0, static_cast<std::uint32_t>(segments + 1), init.bits));
  }

  const ScanSpec& spec() const { return spec_; }
  int device() const { return device_; }
  std::size_t workspace_bytes(std::uint64_t max_n) const {
    return launcher_.workspace_bytes(max_n);
  }

 private:
  // The checks every run makes (the plan's device current); false where nothing is left
  // to launch (n == 0: a reduction of each of `outputs` empty rows or segments is init).
  bool check_run(const void* in, void* out, std::uint64_t n, std::uint64_t outputs,
                 cudaStream_t stream, Value init, const void* device_init) const {
    const std::size_t element = size_of(spec_.dtype);
    const std::uint64_t out_n = spec_.kind == Kind::reduce ? outputs : n;
    if (out == nullptr && out_n != 0) throw UsageError("d_out is NULL");
    if (n > 0 && in == nullptr) throw UsageError("d_in is NULL");
    if (n == 0) {
      if (spec_.kind == Kind::reduce && outputs > 0)
        launch_store_value(out, element, init.bits, device_init, stream, outputs);
      return false;
    }
    if (n > launcher_.max_elements()) {
      throw UsageError(std::to_string(n) + " elements are more than one scan takes (at most " +
                       std::to_string(launcher_.max_elements()) + ")");
    }
    if (overlap(in, n * element, out, out_n * element)) {
      throw UsageError(
          "d_in and d_out overlap: in-place scans are not supported (a fallback re-reads a "
          "predecessor's input, which that predecessor may already have overwritten)");
    }
    if (reinterpret_cast<std::uintptr_t>(in) % element != 0 ||
        reinterpret_cast<std::uintptr_t>(out) % element != 0 ||
        reinterpret_cast<std::uintptr_t>(device_init) % element != 0) {
      throw UsageError("d_in, d_out and d_init must be aligned to the element size (" +
                       std::to_string(element) + " bytes)");
    }
    return true;
  }
  static void check_workspace(const void* workspace) {
    if (workspace == nullptr) throw UsageError("workspace is NULL");
  }

  ScanSpec spec_;
  int device_;
  ScanLauncher launcher_;
};

}  // namespace internal

Plan::Plan(ScanSpec spec, Tuning tuning, int device) {
  reference::check_op(spec.dtype, spec.op);
  if (spec.algorithm == Algorithm::csdl) {
    throw UsageError(
        "csdl needs forward progress between blocks and is the benchmark's; use csdldf (the "
        "default) or rts");
  }
  impl_ = std::make_unique<internal::PlanImpl>(spec, tuning, checked_device(device));
}

Plan::~Plan() = default;
Plan::Plan(Plan&&) noexcept = default;
Plan& Plan::operator=(Plan&&) noexcept = default;

std::size_t Plan::workspace_bytes(std::uint64_t max_n) const {
  return impl_->workspace_bytes(max_n);
}

void Plan::enqueue(const void* d_in, void* d_out, std::uint64_t n, cudaStream_t stream,
                   void* workspace, std::size_t workspace_bytes, std::optional<Value> init) const {
  const Value start = checked_init(spec(), init);
  impl_->enqueue(d_in, d_out, n, stream, workspace, workspace_bytes, start, nullptr);
}

void Plan::enqueue_rows(const void* d_in, void* d_out, std::uint64_t rows, std::uint64_t row_length,
                        cudaStream_t stream, void* workspace, std::size_t workspace_bytes,
                        std::optional<Value> init) const {
  const Value start = checked_init(spec(), init);
  if (row_length != 0 && rows > UINT64_MAX / row_length) {
    throw UsageError(std::to_string(rows) + " rows of " + std::to_string(row_length) +
                     " elements are more than one scan takes");
  }
  impl_->enqueue(d_in, d_out, rows * row_length, stream, workspace, workspace_bytes, start, nullptr,
                 rows, row_length);
}

void Plan::enqueue_segments(const void* d_in, void* d_out, std::uint64_t n,
                            const std::int64_t* d_offsets, std::uint64_t segments,
                            cudaStream_t stream, void* workspace, std::size_t workspace_bytes,
                            std::optional<Value> init) const {
  impl_->enqueue_segments(d_in, d_out, n, d_offsets, segments, stream, workspace, workspace_bytes,
                          checked_init(spec(), init));
}

void Plan::enqueue(const void* d_in, void* d_out, std::uint64_t n, cudaStream_t stream,
                   void* workspace, std::size_t workspace_bytes, const void* d_init) const {
  if (d_init == nullptr) throw UsageError("d_init is NULL (pass no init for the identity)");
  impl_->enqueue(d_in, d_out, n, stream, workspace, workspace_bytes,
                 reference::identity_value(spec().dtype, spec().op), d_init);
}

const ScanSpec& Plan::spec() const {
  return impl_->spec();
}

int Plan::device() const {
  return impl_->device();
}

namespace internal {

void scan_on_device(int ordinal, const ScanSpec& spec, const void* d_in, void* d_out,
                    std::uint64_t n, cudaStream_t stream, std::optional<Value> init,
                    const RunLayout& layout) {
  // A plan and a workspace per device, scan type and stream: runs on one stream are
  // ordered, so they may share one; runs on different streams may not.
  struct Cached {
    std::unique_ptr<Plan> plan;
    DeviceMemory workspace;
  };
  using Key = std::tuple<int, int, int, int, cudaStream_t>;
  // Never destroyed: at exit the CUDA runtime may already be gone, and freeing then would
  // crash; the process's end frees the memory.
  static std::mutex& mutex = *new std::mutex;
  static std::map<Key, Cached>& cache = *new std::map<Key, Cached>;
  const std::lock_guard lock(mutex);
  Cached& cached = cache[Key{ordinal, static_cast<int>(spec.dtype), static_cast<int>(spec.op),
                             static_cast<int>(spec.kind), stream}];
  if (!cached.plan) cached.plan = std::make_unique<Plan>(spec, Tuning{}, ordinal);
  const std::size_t needed = cached.plan->workspace_bytes(n);
  if (needed > cached.workspace.size()) {
    const DeviceScope scope(ordinal);
    // The old workspace may still be in use by runs queued on the stream.
    check(cudaStreamSynchronize(stream), "finishing the runs on the old workspace");
    cached.workspace = DeviceMemory(needed);
    check(cudaMemsetAsync(cached.workspace.data(), 0, needed, stream), "clearing the workspace");
  }
  void* const workspace = cached.workspace.data();
  const std::size_t bytes = cached.workspace.size();
  if (layout.segmented) {
    cached.plan->enqueue_segments(d_in, d_out, n, layout.d_offsets, layout.segments, stream,
                                  workspace, bytes, init);
  } else if (layout.rows == 1) {
    cached.plan->enqueue(d_in, d_out, n, stream, workspace, bytes, init);
  } else {
    cached.plan->enqueue_rows(d_in, d_out, layout.rows, layout.rows == 0 ? 0 : n / layout.rows,
                              stream, workspace, bytes, init);
  }
}

}  // namespace internal

void scan(const ScanSpec& spec, const void* d_in, void* d_out, std::uint64_t n, cudaStream_t stream,
          std::optional<Value> init) {
  internal::scan_on_device(current_device(), spec, d_in, d_out, n, stream, init);
}

}  // namespace gpuscan::cuda
