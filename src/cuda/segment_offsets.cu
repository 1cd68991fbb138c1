// A segmented scan's CSR offsets from the caller's device memory (cuda::Plan::
// enqueue_segments), checked on the device before the scan reads them: the host cannot read
// them without a synchronisation that an enqueued call must not make, and the scan's binary
// searches assume them sorted and within the run.
#include <algorithm>
#include <cstdio>

#include "cuda/check.hpp"
#include "cuda/launch.hpp"

namespace gpuscan::cuda {
namespace {

__global__ void check_segment_offsets(const std::int64_t* offsets, std::uint64_t segments,
                                      std::uint64_t n) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t j = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; j <= segments;
       j += stride) {
    const std::int64_t at = offsets[j];
    const bool in_range = at >= 0 && static_cast<std::uint64_t>(at) <= n;
    const bool ends_right = j == 0 ? at == 0 : j < segments || static_cast<std::uint64_t>(at) == n;
    if (!in_range || !ends_right) {
      printf(
          "gpuscan: segment offsets[%llu] = %lld is invalid: CSR offsets start at 0, do not "
          "decrease and end at n = %llu; the scan did not run\n",
          static_cast<unsigned long long>(j), static_cast<long long>(at),
          static_cast<unsigned long long>(n));
      __trap();
    }
    if (j < segments && offsets[j + 1] < at) {
      printf(
          "gpuscan: segment offsets decrease at index %llu (%lld then %lld): CSR offsets do not "
          "decrease; the scan did not run\n",
          static_cast<unsigned long long>(j + 1), static_cast<long long>(at),
          static_cast<long long>(offsets[j + 1]));
      __trap();
    }
  }
}

}  // namespace

void launch_check_segment_offsets(const std::int64_t* offsets, std::uint64_t segments,
                                  std::uint64_t n, cudaStream_t stream) {
  const std::uint64_t blocks = std::min<std::uint64_t>((segments + 256) / 256, 1024);
  check_segment_offsets<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(offsets, segments, n);
  check(cudaGetLastError(), "launching the check of the segment offsets");
}

}  // namespace gpuscan::cuda
