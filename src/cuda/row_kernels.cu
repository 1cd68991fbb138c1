// The batched scan's chained kernels for one element type, GS_CUDA_DTYPE (DESIGN 3f): a
// translation unit of their own, so that they compile beside kernels.cu's in parallel.
#include "cuda/chained_launch.cuh"

namespace gpuscan::cuda {

template <class T>
void launch_chained_rows(Op op, const ScanArgs& scan, const ChainArgs& chain, cudaStream_t stream) {
  launch_chained_kernels<T, true>(op, scan, chain, stream);
  check(cudaGetLastError(), "launching the batched chained scan");
}

template void launch_chained_rows<Element>(Op, const ScanArgs&, const ChainArgs&, cudaStream_t);

}  // namespace gpuscan::cuda
