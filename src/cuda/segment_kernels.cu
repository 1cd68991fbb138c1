// The segmented scan's chained kernels for one element type, GS_CUDA_DTYPE (DESIGN 3f, CSR
// offsets): a translation unit of their own, so that they compile beside kernels.cu's and
// row_kernels.cu's in parallel.
#include "cuda/chained_launch.cuh"

namespace gpuscan::cuda {

template <class T>
void launch_chained_segments(Op op, const ScanArgs& scan, const ChainArgs& chain,
                             cudaStream_t stream) {
  launch_chained_kernels<T, true, true>(op, scan, chain, stream);
  check(cudaGetLastError(), "launching the segmented chained scan");
}

template void launch_chained_segments<Element>(Op, const ScanArgs&, const ChainArgs&, cudaStream_t);

}  // namespace gpuscan::cuda
