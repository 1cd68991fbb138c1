// One implementation of one scan, ready to launch on any buffers of the device: the tile
// shape, the tile chain (two spines and run counters that each run clears for the next),
// the spine of reduce-then-scan, CUB's temporary storage. Used by the Scanner and the
// benchmark alike.
#pragma once

#include <array>
#include <cstddef>
#include <optional>

#include "core/spine_halves.hpp"
#include "cuda/launch.hpp"
#include "cuda/memory.hpp"
#include "gpuscan/bench.hpp"

namespace gpuscan::cuda {

class ScanLauncher {
 public:
  // Memory is prepared on `stream`, the stream every launch must then use.
  ScanLauncher(DType dtype, Op op, Kind kind, Implementation implementation, const Tuning& tuning,
               cudaStream_t stream);

  // Enqueues a run of n >= 1 elements on `stream`. `in` and `out` are 16-byte aligned.
  void launch(const void* in, void* out, std::uint64_t n, Value init, cudaStream_t stream);

  // The counts of the latest chained run, in device memory; read them once the stream has
  // passed the run.
  const RunControl* last_counts() const { return controls_.as<RunControl>() + halves_.last_half(); }
  bool chained() const;
  bool counts_statistics() const { return chained() && chain_.statistics; }
  std::size_t max_elements() const;

 private:
  TileShapeChoice shape_for(std::uint64_t n) const;
  void launch_chained(const ScanArgs& scan, cudaStream_t stream);

  DType dtype_;
  Op op_;
  Kind kind_;
  Implementation implementation_;
  // The shape of every launch; with an automatic shape, of inputs from kSmallInputBytes on
  // (a block per tile) or below kLargeInputBytes (persistent blocks).
  TileShapeChoice shape_;
  bool automatic_shape_;
  bool per_tile_;                       // a chained scan of one block per tile
  ChainArgs chain_;                     // the fixed part: spin limit, blocking, variant
  std::array<DeviceMemory, 2> spines_;  // the two halves
  detail::SpineHalves halves_;          // in words
  std::uint64_t spine_capacity_words_ = 0;
  DeviceMemory controls_;  // two RunControl blocks
  DeviceMemory rts_spine_;
  DeviceMemory cub_temp_;
};

}  // namespace gpuscan::cuda
