// One scan algorithm for one dtype, operator and kind, ready to launch on any buffers of
// the device: the tile shapes (from the policy table unless the options fix one), the tile
// chain (two spines and run counters that each run clears for the next) and the spine of
// reduce-then-scan. Used by the Scanner and the benchmark alike.
#pragma once

#include <array>
#include <cstddef>

#include "core/policy.hpp"
#include "core/spine_halves.hpp"
#include "cuda/launch.hpp"
#include "cuda/memory.hpp"
#include "gpuscan/testing.hpp"

namespace gpuscan::cuda {

class ScanLauncher {
 public:
  // Memory is prepared on `stream`, the stream every launch must then use.
  ScanLauncher(DType dtype, Op op, Kind kind, Algorithm algorithm,
               const detail::ScanPolicy& policy, const testing::Options& options,
               cudaStream_t stream);

  // Enqueues a run of n >= 1 elements on `stream`. `in` and `out` are 16-byte aligned.
  void launch(const void* in, void* out, std::uint64_t n, Value init, cudaStream_t stream);

  // The counts of the latest chained run, in device memory; read them once the stream has
  // passed the run.
  const RunControl* last_counts() const { return controls_.as<RunControl>() + halves_.last_half(); }
  bool chained() const { return algorithm_ != Algorithm::rts; }
  bool counts_statistics() const { return chained() && chain_.statistics; }
  std::size_t max_elements() const;

 private:
  TileShapeChoice shape_for(std::uint64_t n) const;
  void launch_chained(const ScanArgs& scan, cudaStream_t stream);

  DType dtype_;
  Op op_;
  Kind kind_;
  Algorithm algorithm_;
  TileShapeChoice shape_;        // of every launch, or with small_below_bytes_ of large ones
  TileShapeChoice small_shape_;  // of inputs under small_below_bytes_
  std::size_t small_below_bytes_ = 0;
  ChainArgs chain_;                     // the fixed part: spin limit, blocking, variant
  std::array<DeviceMemory, 2> spines_;  // the two halves
  detail::SpineHalves halves_;          // in words
  std::uint64_t spine_capacity_words_ = 0;
  DeviceMemory controls_;  // two RunControl blocks
  DeviceMemory rts_spine_;
};

}  // namespace gpuscan::cuda
