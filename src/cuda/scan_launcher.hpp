// One scan algorithm for one dtype, operator and kind, ready to launch on any memory of the
// device: the tile shapes (from the policy table unless the options fix one) and the fixed
// part of the tile chain. It holds no memory and no state between runs: each launch takes
// a workspace (launch.hpp, ChainState), so one launcher serves any number of threads and
// streams, each with its own workspace. Used by the Scanner, the benchmark and cuda::Plan.
#pragma once

#include <cstddef>
#include <optional>

#include "core/policy.hpp"
#include "cuda/launch.hpp"
#include "cuda/memory.hpp"
#include "gpuscan/testing.hpp"

namespace gpuscan::cuda {

class ScanLauncher {
 public:
  ScanLauncher(DType dtype, Op op, Kind kind, Algorithm algorithm, const detail::ScanPolicy& policy,
               const testing::Options& options);

  // Bytes of workspace for runs of up to max_n elements; zeroed before its first use, each
  // run leaves it ready for the next.
  std::size_t workspace_bytes(std::uint64_t max_n) const;

  // Enqueues a run of n >= 1 elements on `stream`. `in` and `out` are aligned to the element size
  // (16 bytes for the vector path) and do not overlap; the workspace of `workspace_size` bytes
  // (always passed with the same size) holds at least workspace_bytes(n). The init value is `init`,
  // or where `device_init` is set, the element it points to.
  // With `rows` (row_args), a batched scan: the chained algorithms only.
  void launch(const void* in, void* out, std::uint64_t n, Value init, const void* device_init,
              void* workspace, std::size_t workspace_size, cudaStream_t stream,
              const RowArgs& rows = {}) const;

  bool chained() const { return algorithm_ != Algorithm::rts; }
  bool counts_statistics() const { return chained() && chain_.statistics; }
  std::size_t max_elements() const;
  DType dtype() const { return dtype_; }

 private:
  // The tiles of a run of n elements; `rows`: a batched run's.
  TileShapeChoice shape_for(std::uint64_t n, bool rows = false) const;
  std::uint64_t tiles_for(std::uint64_t n, bool rows = false) const;
  std::uint64_t half_words(std::uint64_t max_n) const;
  // A batched run's tiles when its rows take row-aligned tiles of `shape` (DESIGN 3f:
  // whole rows from phase 0, 16-byte aligned, of at least kAlignedMinTilesPerRow tiles),
  // else 0.
  std::uint64_t aligned_tiles(std::uint64_t n, const RowArgs& rows, TileShapeChoice shape) const;
  // The 32-bit words of each spine half in a workspace of `workspace_size` bytes.
  static std::uint64_t spine_half_words(std::size_t workspace_size);

  DType dtype_;
  Op op_;
  Kind kind_;
  Algorithm algorithm_;
  TileShapeChoice shape_;        // of every launch, or with small_below_bytes_ of large ones
  TileShapeChoice small_shape_;  // of inputs under small_below_bytes_
  TileShapeChoice rows_shape_;   // of batched runs
  std::size_t small_below_bytes_ = 0;
  ChainArgs chain_;  // the fixed part: spin limit, blocking, variant
};

// Refuses options the CUDA kernels cannot honour (logical subgroups, deep look-back steps).
void check_cuda_options(const testing::Options& options);
// The fixed part of a tile chain for csdl or csdldf: the spin limit, blocking, the variant,
// the tile state and order, from the options where they set them, else the policy's.
ChainArgs chain_for(Algorithm algorithm, const testing::Options& options,
                    const detail::ScanPolicy& policy);

// A workspace of the launcher's own kind, grown as needed: what the Scanner and the
// benchmark keep per launcher. Growing synchronises `stream` first.
class OwnedWorkspace {
 public:
  void* reserve(const ScanLauncher& launcher, std::uint64_t n, cudaStream_t stream);
  // The same for a workspace of `bytes` (a compaction's).
  void* reserve(std::size_t bytes, cudaStream_t stream);
  void* data() const { return memory_.data(); }
  std::size_t size() const { return memory_.size(); }
  // The counters of the latest finished chained run (after the stream has passed it).
  const ChainState* state() const { return memory_.as<ChainState>(); }

 private:
  DeviceMemory memory_;
};

}  // namespace gpuscan::cuda
