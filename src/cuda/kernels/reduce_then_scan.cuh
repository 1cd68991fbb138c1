// Reduce-then-scan, the classic three-pass baseline: every tile's reduction into the
// spine, one block's exclusive scan of the spine, then every tile's scan from its prefix.
#pragma once

#include "cuda/kernels/tile_scan.cuh"
#include "cuda/launch.hpp"

namespace gpuscan::cuda {

template <class M, int VPT>
__global__ void __launch_bounds__(max_block_size(VPT))
    rts_reduce(ScanArgs scan, typename M::T* spine) {
  using T = typename M::T;
  __shared__ BlockPartials<T> partials;
  const std::uint32_t tile = blockIdx.x;
  T total = load_and_reduce<M, VPT>(static_cast<const T*>(scan.in), scan.n, tile, partials, 0);
  if (tile == 0) total = M::combine(init_value<T>(scan), total);
  if (threadIdx.x == 0) spine[tile] = total;
}

// One block: each thread takes a contiguous run of tiles, so the spine is read twice in
// all, whatever its length. Afterwards spine[t] holds tiles [0, t) combined (tile 0's
// reduction includes the init value).
template <class M>
__global__ void __launch_bounds__(1024) rts_spine(std::uint32_t count, typename M::T* spine) {
  using T = typename M::T;
  __shared__ BlockPartials<T> partials;
  const std::uint32_t per_thread = (count + blockDim.x - 1) / blockDim.x;
  const std::uint32_t begin = min(count, threadIdx.x * per_thread);
  const std::uint32_t end = min(count, begin + per_thread);
  T total = M::identity();
  for (std::uint32_t t = begin; t < end; ++t) total = M::combine(total, spine[t]);
  const T inclusive = warp_inclusive_scan<M>(total);
  block_scan_totals<M, WholeBlock>(partials, 0, warp_last(inclusive));
  T running = M::combine(warp_prefix<M>(partials, 0), warp_shift_up<M>(inclusive));
  for (std::uint32_t t = begin; t < end; ++t) {
    const T x = spine[t];
    spine[t] = running;
    running = M::combine(running, x);
  }
}

template <class M, int VPT>
__global__ void __launch_bounds__(max_block_size(VPT))
    rts_scan(ScanArgs scan, const typename M::T* spine) {
  using T = typename M::T;
  __shared__ BlockPartials<T> partials;
  Vector<T> rows[VPT];
  const std::uint32_t tile = blockIdx.x;
  load_and_scan<M, VPT, true>(static_cast<const T*>(scan.in), scan.n, tile, partials, 0, rows);
  const T prefix = tile == 0 ? init_value<T>(scan) : spine[tile];
  store_tile<M, VPT>(static_cast<T*>(scan.out), scan.n, tile, scan.tile_count, scan.kind, prefix,
                     partials, 0, rows);
}

}  // namespace gpuscan::cuda
