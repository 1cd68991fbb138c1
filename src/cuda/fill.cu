// Filling device memory with a 32-bit pattern (cudaMemset sets bytes only): the poison the
// benchmark writes over an output before each run.
#include "cuda/check.hpp"
#include "cuda/launch.hpp"

namespace gpuscan::cuda {
namespace {

__global__ void fill_words(std::uint32_t* words, std::uint64_t count, std::uint32_t value) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    words[i] = value;
  }
}

}  // namespace

void launch_fill(std::uint32_t* words, std::uint64_t count, std::uint32_t value,
                 cudaStream_t stream) {
  fill_words<<<1024, 256, 0, stream>>>(words, count, value);
  check(cudaGetLastError(), "launching a fill");
}

}  // namespace gpuscan::cuda
