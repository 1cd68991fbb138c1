// gpuscan::cuda::CompactPlan and the one-call compactions: argument checks, the device switch,
// then the compaction launcher in chunks on the caller's workspace.
#include "cuda/compact_plan.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "core/options.hpp"
#include "cuda/caller_memory.hpp"
#include "cuda/scan_launcher.hpp"

namespace gpuscan::cuda {
namespace {

// The workspace's first bytes hold the two chunk carries (compaction_launch.hpp); the tile
// chain's workspace follows, so that its place, as the carries', does not depend on the size.
constexpr std::size_t kCarryBytes = 256;
static_assert(2 * sizeof(ChunkCarry) <= kCarryBytes);

// A pointer a run reads or writes, for the checks: its name, where, and how many bytes.
struct Span {
  std::string name;
  const void* p;
  std::size_t bytes;
  std::size_t alignment;
  bool written;
};

// The spec, once the checks that every backend makes pass.
const CompactSpec& checked(const CompactSpec& spec, const testing::Options& options) {
  detail::check_compact_spec(spec);
  detail::check_options(spec.algorithm, options);
  return spec;
}

}  // namespace

namespace internal {

CompactPlanImpl::CompactPlanImpl(const CompactSpec& spec, const testing::Options& options,
                                 int device)
    : device_(device), launcher_(checked(spec, options), policy_of(device, spec.dtype), options) {
  const std::uint64_t granule = launcher_.tile_elements();
  const std::uint64_t limit =
      options.chunk_elements
          ? std::min<std::uint64_t>(options.chunk_elements, launcher_.max_elements())
          : launcher_.max_elements();
  chunk_ = std::max<std::uint64_t>(limit / granule, 1) * granule;
}

std::size_t CompactPlanImpl::workspace_bytes(std::uint64_t max_n) const {
  return kCarryBytes + launcher_.workspace_bytes(std::min(max_n, chunk_));
}

void CompactPlanImpl::enqueue(const void* in, const CompactOutputs& outputs, std::uint64_t n,
                              cudaStream_t stream, void* workspace, std::size_t workspace_size,
                              std::optional<Value> constant, const void* flags,
                              const CompactionKernel* kernel) const {
  const CompactSpec& spec = launcher_.spec();
  const std::string name(to_string(spec.compaction));
  if (kernel && spec.compaction != Compaction::select_if &&
      spec.compaction != Compaction::partition) {
    throw UsageError("a device functor is select_if's or partition's predicate; a " + name +
                     " plan has none");
  }
  // With the caller's kernel, its functor holds what it compares with.
  const Value compare_with =
      kernel ? Value{spec.dtype, 0} : detail::compact_constant(spec, constant);
  if (takes_flags(spec.compaction) != (flags != nullptr)) {
    throw UsageError(flags ? name + " takes no flags" : name + " needs d_flags");
  }
  const bool rle = spec.compaction == Compaction::run_length_encode;
  const bool two_outputs = writes_second_output(spec.compaction);
  if (!two_outputs && outputs.second != nullptr) {
    throw UsageError(name + " writes one output and the count, not a second output");
  }
  const std::size_t element = size_of(spec.dtype);
  const std::size_t second_element = rle ? 8 : element;
  std::vector<Span> spans{{"d_in", in, n * element, element, false},
                          {two_outputs ? (rle ? "d_values" : "d_selected") : "d_out", outputs.out,
                           n * element, element, true},
                          {"d_count", outputs.count, 8, 8, true}};
  if (two_outputs) {
    spans.push_back({rle ? "d_lengths" : "d_rejected", outputs.second, n * second_element,
                     second_element, true});
  }
  if (flags) {
    const std::size_t flag_size = size_of(spec.flags_dtype);
    spans.push_back({"d_flags", flags, n * flag_size, flag_size, false});
  }
  for (const Span& s : spans) {
    if (s.p == nullptr && s.bytes > 0) throw UsageError(s.name + " is NULL");
    if (!aligned(s.p, s.alignment)) {
      throw UsageError(s.name + " must be aligned to " + std::to_string(s.alignment) + " bytes");
    }
  }
  // In place: select-if, select-flagged and unique with d_out exactly d_in, the built-in
  // predicates' kernels (in_place.cuh), in one kernel run (the test for a tile already in
  // place is per run: docs/protocol.md, "In-place compaction").
  const bool in_place = n > 0 && outputs.out == in && !two_outputs;
  if (in_place && kernel) {
    throw UsageError(
        "in place (d_out == d_in) takes the built-in predicates; with a device functor give the "
        "output memory of its own");
  }
  if (in_place && n > launcher_.max_elements()) {
    throw UsageError(
        std::to_string(n) + " elements are more than one in-place run takes (at most " +
        std::to_string(launcher_.max_elements()) + "); give " + name + " an output of its own");
  }
  const std::uint64_t chunk = in_place ? n : chunk_;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    for (std::size_t j = i + 1; j < spans.size(); ++j) {
      const Span& a = spans[i];
      const Span& b = spans[j];
      if (!(a.written || b.written) || !overlap(a.p, a.bytes, b.p, b.bytes)) continue;
      if (in_place && a.p == in && b.p == in) continue;
      if (a.name == "d_in" && b.written && b.name != "d_count" && !two_outputs) {
        throw UsageError("d_in and " + b.name +
                         " overlap without being the same array: in place, d_out is d_in "
                         "itself (select_if, select_flagged and unique)");
      }
      throw UsageError(
          a.name + " and " + b.name +
          " overlap: every output needs memory of its own, apart from the inputs" +
          (two_outputs ? " (in place is for select_if, select_flagged and unique)" : ""));
    }
  }
  const DeviceScope scope(device_);
  if (n == 0) {
    check(cudaMemsetAsync(outputs.count, 0, 8, stream), "writing the count");
    return;
  }
  if (workspace == nullptr) throw UsageError("workspace is NULL");
  const std::size_t needed = kCarryBytes + launcher_.workspace_bytes(std::min(n, chunk));
  if (workspace_size < needed) {
    throw UsageError("a compaction workspace of " + std::to_string(workspace_size) +
                     " bytes is too small for " + std::to_string(n) + " elements (needs " +
                     std::to_string(needed) + ": workspace_bytes)");
  }
  CompactArgs args;
  args.in = in;
  args.out = outputs.out;
  args.second = outputs.second;
  args.count = outputs.count;
  args.flags = flags;
  args.constant_bits = compare_with.bits;
  auto* const bytes = static_cast<std::byte*>(workspace);
  launcher_.launch_chunks(
      args, n, chunk, reinterpret_cast<ChunkCarry*>(bytes), bytes + kCarryBytes,
      workspace_size - kCarryBytes, stream, [](std::uint64_t) {}, [](bool) {}, kernel);
}

void compact_on_device(int ordinal, const CompactSpec& spec, const void* d_in,
                       const CompactOutputs& outputs, std::uint64_t n, cudaStream_t stream,
                       std::optional<Value> constant, const void* d_flags,
                       const CompactionKernel* kernel) {
  // A plan and a workspace per device, spec and stream: runs on one stream are ordered, so
  // they may share one; runs on different streams may not.
  struct Cached {
    std::unique_ptr<CompactPlanImpl> plan;
    OwnedWorkspace workspace;
  };
  using Key = std::tuple<int, int, int, int, int, cudaStream_t>;
  // Never destroyed: at exit the CUDA runtime may already be gone (as scan_on_device's).
  static std::mutex& mutex = *new std::mutex;
  static std::map<Key, Cached>& cache = *new std::map<Key, Cached>;
  const std::lock_guard lock(mutex);
  Cached& cached =
      cache[Key{ordinal, static_cast<int>(spec.compaction), static_cast<int>(spec.dtype),
                static_cast<int>(spec.predicate), static_cast<int>(spec.flags_dtype), stream}];
  if (!cached.plan) {
    if (spec.algorithm != Algorithm::csdldf) {
      throw UsageError("compaction on the caller's memory runs csdldf");
    }
    cached.plan = std::make_unique<CompactPlanImpl>(spec, testing::Options{}, ordinal);
  }
  void* workspace = nullptr;
  if (n > 0) {
    const DeviceScope scope(ordinal);
    workspace = cached.workspace.reserve(cached.plan->workspace_bytes(n), stream);
  }
  cached.plan->enqueue(d_in, outputs, n, stream, workspace, cached.workspace.size(), constant,
                       d_flags, kernel);
}

}  // namespace internal

CompactPlan::CompactPlan(CompactSpec spec, Tuning tuning, int device) {
  if (spec.algorithm == Algorithm::csdl) {
    throw UsageError(
        "csdl needs forward progress between blocks and is the benchmark's; use csdldf (the "
        "default)");
  }
  impl_ = std::make_unique<internal::CompactPlanImpl>(spec, testing::Options{.tuning = tuning},
                                                      checked_device(device));
}

CompactPlan::~CompactPlan() = default;
CompactPlan::CompactPlan(CompactPlan&&) noexcept = default;
CompactPlan& CompactPlan::operator=(CompactPlan&&) noexcept = default;

std::size_t CompactPlan::workspace_bytes(std::uint64_t max_n) const {
  return impl_->workspace_bytes(max_n);
}

void CompactPlan::enqueue(const void* d_in, void* d_out, std::uint64_t* d_count, std::uint64_t n,
                          cudaStream_t stream, void* workspace, std::size_t workspace_bytes,
                          std::optional<Value> constant, const void* d_flags) const {
  const Compaction c = spec().compaction;
  if (writes_second_output(c)) {
    throw UsageError(std::string(to_string(c)) + " writes two outputs: call " +
                     (is_partition(c) ? "enqueue_partition" : "enqueue_run_length_encode"));
  }
  impl_->enqueue(d_in, {d_out, nullptr, d_count}, n, stream, workspace, workspace_bytes, constant,
                 d_flags);
}

void CompactPlan::enqueue_partition(const void* d_in, void* d_selected, void* d_rejected,
                                    std::uint64_t* d_count, std::uint64_t n, cudaStream_t stream,
                                    void* workspace, std::size_t workspace_bytes,
                                    std::optional<Value> constant, const void* d_flags) const {
  if (!is_partition(spec().compaction)) {
    throw UsageError("enqueue_partition needs a partition or partition_flagged plan, not " +
                     std::string(to_string(spec().compaction)));
  }
  impl_->enqueue(d_in, {d_selected, d_rejected, d_count}, n, stream, workspace, workspace_bytes,
                 constant, d_flags);
}

void CompactPlan::enqueue_run_length_encode(const void* d_in, void* d_values,
                                            std::uint64_t* d_lengths, std::uint64_t* d_count,
                                            std::uint64_t n, cudaStream_t stream, void* workspace,
                                            std::size_t workspace_bytes) const {
  if (spec().compaction != Compaction::run_length_encode) {
    throw UsageError("enqueue_run_length_encode needs an rle plan, not " +
                     std::string(to_string(spec().compaction)));
  }
  impl_->enqueue(d_in, {d_values, d_lengths, d_count}, n, stream, workspace, workspace_bytes,
                 std::nullopt, nullptr);
}

void CompactPlan::enqueue_kernel(const internal::CompactionKernel& kernel, const void* d_in,
                                 const CompactOutputs& outputs, std::uint64_t n,
                                 cudaStream_t stream, void* workspace,
                                 std::size_t workspace_bytes) const {
  impl_->enqueue(d_in, outputs, n, stream, workspace, workspace_bytes, std::nullopt, nullptr,
                 &kernel);
}

const CompactSpec& CompactPlan::spec() const {
  return impl_->spec();
}

int CompactPlan::device() const {
  return impl_->device();
}

void compact(const CompactSpec& spec, const void* d_in, const CompactOutputs& outputs,
             std::uint64_t n, cudaStream_t stream, std::optional<Value> constant,
             const void* d_flags) {
  internal::compact_on_device(current_device(), spec, d_in, outputs, n, stream, constant, d_flags);
}

void compact(const internal::CompactionKernel& kernel, const CompactSpec& spec, const void* d_in,
             const CompactOutputs& outputs, std::uint64_t n, cudaStream_t stream) {
  internal::compact_on_device(current_device(), spec, d_in, outputs, n, stream, std::nullopt,
                              nullptr, &kernel);
}

}  // namespace gpuscan::cuda
