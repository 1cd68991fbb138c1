// A prepared scan: pipelines built once, then run on any buffers of the device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "gpuscan/device.hpp"
#include "gpuscan/types.hpp"

namespace gpuscan {

struct ScanSpec {
  DType dtype = DType::u32;
  Op op = Op::add;
  Kind kind = Kind::inclusive;
  Algorithm algorithm = Algorithm::csdldf;
};

enum class TileState { automatic, split, packed };

// Knobs with device defaults; zero means "the backend's choice".
struct Tuning {
  // Look-back steps on a not-ready tile before csdldf falls back on it, for the nearest
  // successor; one further back waits up to 64 times longer. On Vulkan, once a run has seen
  // a starved tile (a fallback found it unposted), the nearest successor waits one step
  // (docs/protocol.md).
  std::uint32_t max_spins = 4;
  // Simulated blocking: tiles with ((tile + 1) & mask) == 0 never post their aggregate.
  std::optional<std::uint32_t> blocking_mask;
  // Threads per workgroup (Vulkan: a power of two; CUDA: a multiple of 32 in [64, 1024],
  // at most 512 with 8 vectors per thread; default 256; on Vulkan GPUs, where neither this
  // nor vectors_per_thread is set, 512 x 3).
  std::uint32_t workgroup_size = 0;
  // Vectors of 16 bytes (four 32-bit or two 64-bit elements) per thread (Vulkan: 1..64,
  // default 4; CUDA: 4 or 8, by default 16 elements a thread).
  std::uint32_t vectors_per_thread = 0;
  std::uint32_t subgroup_size = 0;  // Vulkan: logical subgroup size, <= the hardware's
  // Windows of (subgroup size / words per tile) tiles a look-back step reads at once
  // (default 1: deeper steps measured slower on an H200). CUDA: at most 4; by default, where
  // every block of a launch is resident at once and 4 windows hold all its tiles, as many
  // as do, so that one round trip reads every predecessor.
  std::uint32_t lookback_depth = 0;
  // csdldf on GPUs (refused for csdl and on CPU drivers; other algorithms have no tile
  // chain): take tiles in dispatch order (the workgroup id) instead of claiming them from an
  // atomic counter. Still safe, since a look-back falls back on a tile whose workgroup has
  // not started, but fast only where the device starts workgroups in order. Unset: csdldf
  // on a GPU takes dispatch order (CUDA: its persistent blocks are all resident); otherwise
  // the counter.
  std::optional<bool> dispatch_order;
  // How csdl/csdldf store a tile's state: split over 32-bit words, 16 value bits each
  // (portable), or packed into 64-bit words, 32 value bits each, that one lane reads
  // (needs 64-bit buffer atomics; a look-back step then covers 32 tiles of any type, not
  // 16 or 8). Automatic: packed where the device allows, else split.
  TileState tile_state = TileState::automatic;
  // Elements per run: larger scans go in chunks, each chunk's carry the next one's init.
  // 0: as many as one buffer binding of the device allows (CUDA: 2^31 tiles).
  std::size_t chunk_elements = 0;
  // CUDA: 0 or 1 (the default): a block per tile, which looks back with its first warp.
  // 2..4: persistent blocks, each holding that many tiles in shared memory (the one waiting
  // for its prefix, the one it scans, the rest on their way), with a look-back warp.
  std::uint32_t staged_tiles = 0;
  // Run the statistics variant of csdl/csdldf (separate pipelines: the normal ones pay
  // nothing for it).
  bool statistics = false;
};

// What the look-backs of one run did, summed over all workgroups.
struct Statistics {
  std::uint64_t spins = 0;           // reads that found the awaited tile not ready
  std::uint64_t lookback_steps = 0;  // look-back reads (each covers a window of tiles)
  std::uint64_t fallbacks = 0;       // fallbacks initiated
  std::uint64_t insertions = 0;      // fallback insertions into a tile nobody had posted
};

struct RunResult {
  double gpu_ms = 0;                     // device time of the scan, from device timestamps
  std::optional<Statistics> statistics;  // with Tuning::statistics, for csdl and csdldf
};

namespace detail {
class ScannerImpl;
}

class Scanner {
 public:
  Scanner(Device& device, ScanSpec spec, Tuning tuning = {});
  ~Scanner();
  Scanner(Scanner&&) noexcept;
  Scanner& operator=(Scanner&&) noexcept;

  // Scans n elements of `in` into `out` (out-of-place). Kind::reduce writes one element.
  // `init` (default: the operator's identity) must have the spec's dtype. Any n: more than
  // one run takes goes in chunks (gpu_ms and statistics are then sums).
  RunResult run(const Buffer& in, Buffer& out, std::size_t n, std::optional<Value> init = {});

  const ScanSpec& spec() const { return spec_; }

 private:
  Value chunk_carry(const Buffer& in, const Buffer& out, std::size_t offset, std::size_t count);

  ScanSpec spec_;
  std::size_t chunk_ = 0;  // elements per run
  std::shared_ptr<detail::DeviceImpl> device_;
  std::unique_ptr<detail::ScannerImpl> impl_;
};

}  // namespace gpuscan
