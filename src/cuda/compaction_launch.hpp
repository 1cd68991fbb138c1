// What the host passes to the CUDA compaction kernels (DESIGN 3e), and the launcher that
// compaction_kernels.cu instantiates once per element type. Plain C++: the host files include
// it without CUDA's compiler.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/launch.hpp"
#include "gpuscan/compactor.hpp"
#include "gpuscan/cuda_compaction.hpp"

namespace gpuscan::cuda {

// The compaction kernels' tile: blocks of up to kCompactBlockLimit threads, each with its
// operation's rows of 16-byte vectors (cuda/compaction_policy.hpp).
constexpr std::uint32_t kCompactBlockLimit = 512;
// 32-bit words of spine a tile takes, at most: its 64-bit value (run-length encoding's count and
// the position of its last head; in-place compaction's count) in either tile state, and after
// every tile's state words in the half, in-place compaction's claim word (docs/protocol.md,
// "In-place compaction"), cleared with them.
constexpr std::uint32_t kCompactStateWords = 4;
constexpr std::uint32_t kCompactSpineWords = kCompactStateWords + 1;

// Compaction in chunks (docs/protocol.md, "Compaction in chunks"): what a chunk's last tile
// leaves for the next chunk. (The element before a chunk is read from the input itself.)
struct ChunkCarry {
  std::uint64_t count;      // kept elements up to the chunk's end
  std::uint64_t last_head;  // run-length encoding: where the last run began (0-based)
};

struct CompactArgs {
  Compaction compaction = Compaction::select_if;
  Predicate predicate = Predicate::lt;
  const void* in = nullptr;
  void* out = nullptr;             // the kept elements, in order
  void* second = nullptr;          // partitions: the rejected elements; rle: the lengths (u64)
  const void* flags = nullptr;     // select-flagged, partition-flagged
  std::uint32_t flag_bytes = 4;    // 4 or 8: only whether a flag is zero matters
  std::uint64_t* count = nullptr;  // written by the last tile
  std::uint64_t n = 0;
  std::uint32_t tile_count = 0;
  std::uint32_t block_size = 256;
  std::uint32_t rows = 4;           // 16-byte vectors a thread: the policy's
  std::uint64_t constant_bits = 0;  // select-if's and partition's constant
  // How many tiles ahead of its own a block starts a tile's input on its way into L2 (0: none).
  // launch_tiles sets it from the policy; persistent blocks prefetch their own next tile where
  // the policy prefetches, and do not read it.
  std::uint32_t prefetch_distance = 0;
  // A chunk of a longer input: `in` and `flags` point at its first element, the element
  // `chunk_start` of the whole (so in[-1] is the chunk before's last); `out`, `second` and
  // `count` are the whole compaction's. `carry_in`: the chunk before's carry (null for the
  // first chunk); `carry_out`: where the last tile leaves this chunk's (null for the last).
  std::uint64_t chunk_start = 0;
  const ChunkCarry* carry_in = nullptr;
  ChunkCarry* carry_out = nullptr;
};

// Launches the compaction of a.n >= 1 elements of T on the tile chain `chain`.
template <class T>
void launch_compaction(const CompactArgs& a, ChainArgs chain, cudaStream_t stream);

// A compaction kernel launch compiled elsewhere, in place of launch_compaction's: select-if's
// or partition's with the caller's device functor as the predicate (gpuscan/
// cuda_compaction.cuh instantiates it in the caller's translation unit).
using internal::CompactionKernel;

// The benchmark's baseline: CUB's counterpart of a compaction on the same buffers
// (cub_compaction.cu), select-flagged and partition-flagged with u32 flags; the count written to
// `count`. temp == nullptr: returns the temporary storage's size only.
template <class T>
std::size_t launch_cub_compaction(const CompactArgs& a, void* temp, std::size_t temp_bytes,
                                  cudaStream_t stream);

}  // namespace gpuscan::cuda
