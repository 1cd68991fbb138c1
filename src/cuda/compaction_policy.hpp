// The CUDA compaction kernels' tuning table (DESIGN 3e): per operation, the tile (threads
// per block, rows of 16-byte vectors a thread), the tile state where the caller leaves the
// choice, and the registers a thread may take. compaction_kernels.cu compiles each operation
// for its row only; the launcher takes the rest. Plain C++ (constexpr): both the kernels and
// the host include it.
#pragma once

#include <array>
#include <cstdint>

#include "gpuscan/compactor.hpp"

namespace gpuscan::cuda {

struct CompactionPolicy {
  Compaction compaction;
  std::uint32_t block_size;       // the default; the caller may pick another multiple of 32
  std::uint32_t wide_block_size;  // the same for 8-byte elements
  int rows;                       // 16-byte vectors a thread
  bool packed;                    // the tile state where the caller leaves the choice
  int registers;                  // __maxnreg__ of the operation's kernels (compaction.cuh)
  bool persistent;                // one block per resident slot, tile after tile (compaction.cuh)
  bool packed_row_counts;         // the rows' counts scanned four rows a word (warp_kept)
  // The L2 prefetch (compaction.cuh, prefetch_tile and prefetch_next_tile): each block starts
  // the input of the tile resident blocks x prefetch_eighths / 8 after its own on its way into
  // L2 (0: none); persistent blocks, which take every resident-th tile, their own next tile (8).
  std::uint32_t prefetch_eighths;
};

// H100, u32 and u64 at 2^28, CUB and memcpy in the same process (docs/performance.md K8-K12 for
// the tiles, K15 for the registers, K27-K28 for the partitions). Select-if, unique, run-length
// encoding and partition run fastest warp-staged with 8 rows and the split tile state
// (block-staged on select-flagged's 256 x 4, select-if and unique ran 10-20% slower), partition
// by flags with 6 (its flags are a second stream of loads in flight: 8 rows spill 128 bytes and
// ran no faster); select-flagged stages block by block (compaction.cuh, kWarpStaged) with 256
// threads of 4 rows, packed (warp-staged with 4, 6 or 8 rows it ran 1-7% slower). Registers:
// left to ptxas, a small code change moved unique between 64 and 81 registers (four blocks a
// multiprocessor or three) and its time by 1.45x; the caps fix the occupancy each operation
// runs best at, spills included: 64 (four blocks) for select-if (3% faster than ptxas's
// choice), unique and the partitions (80 no faster for partition, 6% slower by flags); 80
// (three blocks) for run-length encoding (15% faster than 117 registers and two blocks, u64
// 23%; with its positions staged in 16 bits, 48 KiB a block, 64 registers and four blocks ran
// 2% slower than 80, K26); 48 (five blocks) for select-flagged (6% faster than 64). Threads per
// block (K8, K19, K26, K36): 256, but partition by flags 128 (1-1.5% faster); unique ran 8-9%
// faster at 512 before the prefetch and 1-2% slower there after it (u64 3-4%). Persistent blocks
// (K29): run-length encoding only, 6% faster than a block a tile (at 64 registers no faster);
// persistent, select-if ran 22% slower (36 -> 400 bytes spilled as a loop), unique 4-6%.
// Packed row counts (K33): select-if 3%, unique 5%, run-length encoding 5% faster; partition
// 1.6% slower, so the partitions scan a row at a time (select-flagged stages block by block and
// never takes the warp's path). Run-length encoding on the packed tile state (K34): its 64-bit
// tile value takes one lane a tile there (a window of 32 tiles) against four in the split
// form (8 tiles), 10% faster at 16 bytes spilled; the 32-bit counts of the others run
// fastest split (packed, select-if spills 252 bytes and ran 4% slower, unique 10%).
// L2 prefetch (K35): while a block waits on its look-back the memory is idle unless another block
// is loading; a bulk prefetch (one instruction, no registers) of a later tile fills that time.
// Persistent rle, its own next tile at the top of each tile: 10% faster (later in the tile,
// less; two tiles ahead 20% slower). A block a tile: resident / 8 tiles ahead of its own,
// select 6%, partition 2.5%, unique 1.5%, partition by flags 1.5% faster; select-flagged
// unchanged (0); resident / 2 and more ahead ran slower (the prefetched lines left L2 first).
constexpr std::array kCompactionPolicies{
    CompactionPolicy{Compaction::select_if, 256, 256, 8, false, 64, false, true, 1},
    CompactionPolicy{Compaction::unique, 256, 256, 8, false, 64, false, true, 1},
    CompactionPolicy{Compaction::run_length_encode, 256, 256, 8, true, 80, true, true, 8},
    CompactionPolicy{Compaction::select_flagged, 256, 256, 4, true, 48, false, false, 0},
    CompactionPolicy{Compaction::partition, 256, 256, 8, false, 64, false, false, 1},
    CompactionPolicy{Compaction::partition_flagged, 128, 256, 6, false, 64, false, false, 1},
};

// Persistent blocks prefetch their own next tile or none: the distance has no other meaning
// for them (compact_tiles).
constexpr bool prefetch_rows_valid() {
  for (const CompactionPolicy& row : kCompactionPolicies) {
    if (row.persistent && row.prefetch_eighths != 0 && row.prefetch_eighths != 8) return false;
  }
  return true;
}
static_assert(prefetch_rows_valid(), "a persistent row's prefetch_eighths is 0 or 8");

constexpr CompactionPolicy compaction_policy(Compaction compaction) {
  for (const CompactionPolicy& row : kCompactionPolicies) {
    if (row.compaction == compaction) return row;
  }
  return kCompactionPolicies[0];
}

}  // namespace gpuscan::cuda
