// The kernel launchers for one element type, GS_CUDA_DTYPE (CMake compiles this file once
// per type, in parallel). Every operator the type has gets its kernels here.
#include "cuda/chained_launch.cuh"
#include "cuda/kernels/reduce_then_scan.cuh"
#include "cuda/kernels/validation.cuh"

namespace gpuscan::cuda {

template <class T>
void launch_chained_scan(Op op, const ScanArgs& scan, const ChainArgs& chain, cudaStream_t stream) {
  if (scan.rows.segments) return launch_chained_segments<T>(op, scan, chain, stream);
  if (scan.rows.tiles_per_row != 0) return launch_chained_aligned_rows<T>(op, scan, chain, stream);
  if (scan.rows.length != 0) return launch_chained_rows<T>(op, scan, chain, stream);
  launch_chained_kernels<T, false>(op, scan, chain, stream);
  check(cudaGetLastError(), "launching the chained scan");
}

template <class T>
void launch_reduce_then_scan(Op op, const ScanArgs& scan, void* spine, cudaStream_t stream) {
  with_monoid<T>(op, [&](auto monoid) {
    using M = decltype(monoid);
    T* values = static_cast<T*>(spine);
    const dim3 grid(scan.tile_count), block(scan.block_size);
    with_vectors_per_thread(scan.vectors_per_thread, [&](auto vpt) {
      rts_reduce<M, vpt()><<<grid, block, 0, stream>>>(scan, values);
      rts_spine<M><<<1, 1024, 0, stream>>>(scan.tile_count, values);
      rts_scan<M, vpt()><<<grid, block, 0, stream>>>(scan, values);
    });
  });
  check(cudaGetLastError(), "launching reduce-then-scan");
}

template <class T>
void launch_check(Op op, const CheckArgs& args, cudaStream_t stream) {
  with_monoid<T>(op,
                 [&](auto monoid) { check_run<decltype(monoid)><<<1024, 256, 0, stream>>>(args); });
  check(cudaGetLastError(), "launching the device check");
}

template void launch_chained_scan<Element>(Op, const ScanArgs&, const ChainArgs&, cudaStream_t);
template void launch_reduce_then_scan<Element>(Op, const ScanArgs&, void*, cudaStream_t);
template void launch_check<Element>(Op, const CheckArgs&, cudaStream_t);

}  // namespace gpuscan::cuda
