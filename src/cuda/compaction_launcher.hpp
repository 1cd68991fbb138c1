// One compaction (DESIGN 3e) for one spec, ready to launch on any memory of the device: the
// tile shape and the fixed part of the tile chain, as ScanLauncher holds them for a scan. It
// holds no memory: each launch takes a workspace (launch.hpp, ChainState), left ready for
// the next run. Used by the Compactor and the compaction benchmark.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

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
  // and carries; the launcher fills in the rest. `kernel`: the caller's kernel (a device
  // functor's) in place of the library's.
  void launch(CompactArgs args, void* workspace, std::size_t workspace_size, cudaStream_t stream,
              const CompactionKernel* kernel = nullptr) const;

  // Enqueues n >= 1 elements in chunks of `chunk` (whole tiles, at most max_elements()), one
  // run after the other on the stream with the carry handed on through the two slots at
  // `carry` in device memory, no host round trip between them (docs/protocol.md, "Compaction
  // in chunks"). `args` names the whole input's in, flags and outputs. before_chunk(c) runs
  // before chunk c is launched, after_chunk(last) after it (the Compactor times with them).
  template <class Before, class After>
  void launch_chunks(CompactArgs args, std::uint64_t n, std::uint64_t chunk, ChunkCarry* carry,
                     void* workspace, std::size_t workspace_size, cudaStream_t stream,
                     Before before_chunk, After after_chunk,
                     const CompactionKernel* kernel = nullptr) const {
    const auto* in = static_cast<const std::byte*>(args.in);
    const auto* flags = static_cast<const std::byte*>(args.flags);
    for (std::uint64_t first = 0, c = 0; first < n; first += chunk, ++c) {
      args.n = std::min(chunk, n - first);
      args.chunk_start = first;
      args.in = in + first * size_of(spec_.dtype);
      args.flags = flags ? flags + first * size_of(spec_.flags_dtype) : nullptr;
      args.carry_in = c > 0 ? carry + (c - 1) % 2 : nullptr;
      args.carry_out = first + args.n < n ? carry + c % 2 : nullptr;
      before_chunk(c);
      launch(args, workspace, workspace_size, stream, kernel);
      after_chunk(first + args.n == n);
    }
  }

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
