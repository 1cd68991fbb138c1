// One compaction (DESIGN 3e) for one spec, ready to launch on any memory of the device: the
// tile shape and the fixed part of the tile chain, as ScanLauncher holds them for a scan. It
// holds no memory: each launch takes a workspace (launch.hpp, ChainState), left ready for
// the next run. Used by the Compactor and the compaction benchmark.
#pragma once

#include <cstddef>

#include "core/policy.hpp"
#include "cuda/compaction_launch.hpp"
#include "gpuscan/testing.hpp"

namespace gpuscan::cuda {

class CompactionLauncher {
 public:
  CompactionLauncher(const CompactSpec& spec, const detail::ScanPolicy& policy,
                     const testing::Options& options);

  // Bytes of workspace for runs of up to max_n elements; zeroed before its first use.
  std::size_t workspace_bytes(std::uint64_t max_n) const;
  // Positions of run-length encoding's heads are 32-bit, and so are counts within a tile.
  std::size_t max_elements() const;

  // Enqueues a run of 1 <= n <= max_elements() elements; `args` names the buffers (in, out,
  // second, flags, count), the constant and, for a chunk of a longer input, the chunk's place
  // and carries; the launcher fills in the rest.
  void launch(CompactArgs args, void* workspace, std::size_t workspace_size,
              cudaStream_t stream) const;

  bool counts_statistics() const { return chain_.statistics; }
  const CompactSpec& spec() const { return spec_; }
  std::uint32_t tile_elements() const;

 private:
  std::uint64_t tiles_for(std::uint64_t n) const;

  CompactSpec spec_;
  std::uint32_t block_size_ = kDefaultBlockSize;
  std::uint32_t rows_ = 4;  // 16-byte vectors a thread: the policy's
  ChainArgs chain_;         // the fixed part: spin limit, blocking, variant
};

}  // namespace gpuscan::cuda
