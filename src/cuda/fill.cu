// Filling device memory with a 32-bit pattern (cudaMemset sets bytes only): the poison the
// benchmark writes over an output before each run; and one value stored by a kernel into
// `count` elements (reductions of nothing, in stream order and capturable in a graph).
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

__global__ void store_value(void* out, std::uint32_t bytes, std::uint64_t count, std::uint64_t bits,
                            const void* from) {
  if (from != nullptr) {
    bits = bytes == 8 ? *static_cast<const std::uint64_t*>(from)
                      : *static_cast<const std::uint32_t*>(from);
  }
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    if (bytes == 8) {
      static_cast<std::uint64_t*>(out)[i] = bits;
    } else {
      static_cast<std::uint32_t*>(out)[i] = static_cast<std::uint32_t>(bits);
    }
  }
}

}  // namespace

void launch_store_value(void* out, std::size_t bytes, std::uint64_t bits, const void* from,
                        cudaStream_t stream, std::uint64_t count) {
  const std::uint64_t blocks = count < 256 * 1024 ? (count + 255) / 256 : 1024;
  store_value<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(
      out, static_cast<std::uint32_t>(bytes), count, bits, from);
  check(cudaGetLastError(), "launching a store");
}

void launch_fill(std::uint32_t* words, std::uint64_t count, std::uint32_t value,
                 cudaStream_t stream) {
  fill_words<<<1024, 256, 0, stream>>>(words, count, value);
  check(cudaGetLastError(), "launching a fill");
}

}  // namespace gpuscan::cuda
