// The library's side of gpuscan/cuda_compaction.hpp: a CompactPlan's checks and its chunked
// launch on the caller's workspace, and the one-call compactions on a given device.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "cuda/compaction_launcher.hpp"
#include "gpuscan/cuda_compaction.hpp"
#include "gpuscan/testing.hpp"

namespace gpuscan::cuda::internal {

class CompactPlanImpl {
 public:
  // options: a plan's tuning, and for tests the chunk length (chunk_elements).
  CompactPlanImpl(const CompactSpec& spec, const testing::Options& options, int device);

  std::size_t workspace_bytes(std::uint64_t max_n) const;
  // Any operation: `outputs.second` is partition's rejected or run-length encoding's lengths.
  // `kernel` (select-if and partition, no constant): the caller's, with its own predicate.
  void enqueue(const void* in, const CompactOutputs& outputs, std::uint64_t n, cudaStream_t stream,
               void* workspace, std::size_t workspace_size, std::optional<Value> constant,
               const void* flags, const CompactionKernel* kernel = nullptr) const;

  const CompactSpec& spec() const { return launcher_.spec(); }
  int device() const { return device_; }

 private:
  int device_;
  CompactionLauncher launcher_;
  std::uint64_t chunk_;  // elements per kernel run: whole tiles
};

// gpuscan::cuda::compact on device `ordinal`, whatever the calling thread's current device.
void compact_on_device(int ordinal, const CompactSpec& spec, const void* d_in,
                       const CompactOutputs& outputs, std::uint64_t n, cudaStream_t stream,
                       std::optional<Value> constant, const void* d_flags,
                       const CompactionKernel* kernel = nullptr);

}  // namespace gpuscan::cuda::internal
