// Knobs for tests, experiments and the benchmark: simulated blocking, the statistics
// variant, tile shapes and orders, chunk sizes, and the timed benchmark itself. Not part
// of gpuscan/gpuscan.hpp: a program that scans needs none of this, and every default here
// is the library's own choice (its per-device policy tables).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "gpuscan/device.hpp"
#include "gpuscan/scanner.hpp"
#include "gpuscan/types.hpp"

namespace gpuscan::testing {

// How csdl/csdldf store a tile's state: split over 32-bit words, 16 value bits each
// (portable), or packed into 64-bit words, 32 value bits each, that one lane reads (needs
// 64-bit buffer atomics). Automatic: packed where the device allows, else split.
enum class TileState { automatic, split, packed };

// Zero or unset means "the library's choice".
struct Options {
  Tuning tuning;
  // Simulated blocking: tiles with ((tile + 1) & mask) == 0 never post their aggregate,
  // so that successors must fall back (csdldf only).
  std::optional<std::uint32_t> blocking_mask;
  // Run the statistics variant of csdl/csdldf (separate kernels: the normal ones pay nothing
  // for it); RunResult::statistics then holds the counts.
  bool statistics = false;
  // Threads per workgroup (Vulkan: a power of two; CUDA: a multiple of 32 in [64, 512]).
  std::uint32_t workgroup_size = 0;
  // 16-byte vectors (four 32-bit or two 64-bit elements) per thread (Vulkan: 1..64; CUDA:
  // 4, 6 or 8).
  std::uint32_t vectors_per_thread = 0;
  // Vulkan: a logical subgroup size, a power of two up to the hardware's, so that a device
  // of wide subgroups proves the narrow ones' code paths.
  std::uint32_t subgroup_size = 0;
  // Windows of (subgroup size / words per tile) tiles a look-back step reads at once
  // (Vulkan: 1..16; CUDA: 1..4).
  std::uint32_t lookback_depth = 0;
  // csdldf: take tiles in dispatch order (the workgroup id) instead of claiming them from
  // an atomic counter. Refused for csdl (which could wait forever) and on CPU drivers.
  std::optional<bool> dispatch_order;
  // Vulkan batched runs on row-aligned tiles: claim the tiles round the rows (tile k of
  // every row before tile k + 1 of any) or row by row. Unset: by the run's tile count, as
  // the policy says. CUDA takes them row by row and refuses true.
  std::optional<bool> round_rows;
  TileState tile_state = TileState::automatic;
  // Elements per run: larger scans go in chunks, each chunk's carry the next one's init;
  // larger compactions too, the running count carried on the device (rounded down to whole
  // tiles, at least one).
  std::size_t chunk_elements = 0;
  // Vulkan compaction: output elements one storage-buffer binding is taken to hold (at most
  // what the device's maxStorageBufferRange allows), so that a test of a few hundred thousand
  // elements has chunks whose outputs reach past it: those run the pipeline that writes the
  // outputs through buffer device addresses, or where the device has none, the compaction is
  // refused (docs/protocol.md, "Compaction in chunks").
  std::size_t output_binding_elements = 0;
  // Vulkan compaction: whether chunks whose outputs reach past one binding may write them
  // through buffer device addresses. Unset: where the device has them; false: as on a device
  // without them (one binding is the limit); true on a device without them is refused.
  std::optional<bool> wide_outputs;
  // Vulkan compaction: whether the owner stages its positions as 16-bit variables (devices
  // with shaderInt16) or two to a 32-bit word by atomic OR. Unset: where the device has
  // shaderInt16; false: as on a device without; true on a device without is refused.
  std::optional<bool> int16_positions;
  // Vulkan compaction: the rows' counts packed 16 bits a row, as subgroups of 64 lanes and more
  // pack them, instead of 8 (a test of that path on devices with smaller subgroups).
  bool wide_row_counts = false;
};

// A Scanner with test or experiment knobs.
Scanner make_scanner(Device& device, const ScanSpec& spec, const Options& options);

// What a benchmark can time: the three scan algorithms, the copy baseline (the memcpy
// kernel on Vulkan, cudaMemcpyAsync on CUDA) and, on CUDA, NVIDIA's CUB (sums only).
enum class Implementation { csdldf, csdl, rts, memcpy, cub };
std::string_view to_string(Implementation);
std::optional<Implementation> parse_implementation(std::string_view);
// The implementation that runs `algorithm`.
Implementation implementation_of(Algorithm algorithm);

struct BenchCase {
  DType dtype = DType::u32;
  Op op = Op::add;
  Kind kind = Kind::inclusive;
  std::size_t n = 0;
  // A batched scan (DESIGN 3f): n / row_length rows of row_length elements (inclusive or
  // exclusive; CUDA). 0: one scan of n.
  std::size_t row_length = 0;
  int runs = 0;      // timed runs per implementation (after untimed warm-up runs)
  bool hot = false;  // skip the cache flush between runs
  // CUDA: after the flush, one untimed run of the same implementation on a second input of
  // the same size, so that each timed run finds its code in the caches and its data not.
  bool warm_code = false;
  std::uint64_t seed = 0;  // of the random input
  Options options;         // for the scans; the baselines (memcpy, cub) take none
  std::vector<Implementation> implementations;
};

struct BenchResult {
  Implementation implementation = Implementation::memcpy;
  std::vector<double> ms;  // device time of each timed run
  int validated = 0;       // runs whose output the device checked and found right
  // csdl runs whose look-back gave up waiting for a predecessor (no forward progress on
  // this device); their output is wrong and they are not among the validated.
  int abandoned = 0;
  std::vector<Statistics> statistics;  // per run, with Options::statistics for csdl/csdldf
};

// Runs every implementation of the case on the same random input, taking turns (run r of
// each, then run r + 1). Outputs are poisoned before each run and checked on the device
// after it.
std::vector<BenchResult> benchmark(Device& device, const BenchCase& bench_case);

double median(std::vector<double> values);

}  // namespace gpuscan::testing
