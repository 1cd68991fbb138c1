// The batched scan's chained kernels on row-aligned tiles for one element type,
// GS_CUDA_DTYPE (DESIGN 3f; rows.cuh, AlignedRows): a translation unit of their own, so
// that they compile beside the others in parallel.
#include "cuda/chained_launch.cuh"

namespace gpuscan::cuda {

template <class T>
void launch_chained_aligned_rows(Op op, const ScanArgs& scan, const ChainArgs& chain,
                                 cudaStream_t stream) {
  launch_chained_kernels<T, false, false, true>(op, scan, chain, stream);
  check(cudaGetLastError(), "launching the batched chained scan on row-aligned tiles");
}

template void launch_chained_aligned_rows<Element>(Op, const ScanArgs&, const ChainArgs&,
                                                   cudaStream_t);

}  // namespace gpuscan::cuda
