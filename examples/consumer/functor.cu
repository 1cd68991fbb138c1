// select_if with a device functor of the caller's (gpuscan/cuda_compaction.cuh), built against
// an installed gpuscan: keeps the multiples of 3 in 1..100 (33 of them) where a CUDA GPU is.
#include <cuda_runtime_api.h>
#include <gpuscan/cuda_compaction.cuh>

#include <cstdint>
#include <cstdio>
#include <numeric>
#include <vector>

struct MultipleOf3 {
  __device__ bool operator()(std::uint32_t x) const { return x % 3 == 0; }
};

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA GPU: built, not run\n");
    return 0;
  }
  std::vector<std::uint32_t> values(100);
  std::iota(values.begin(), values.end(), 1u);
  std::uint32_t *in = nullptr, *out = nullptr;
  std::uint64_t* count = nullptr;
  cudaMalloc(&in, 400);
  cudaMalloc(&out, 400);
  cudaMalloc(&count, 8);
  cudaMemcpy(in, values.data(), 400, cudaMemcpyHostToDevice);
  try {
    gpuscan::cuda::select_if(in, out, count, 100, MultipleOf3{});
  } catch (const gpuscan::Error& e) {
    std::fprintf(stderr, "consumer_functor: %s\n", e.what());
    return 1;
  }
  std::uint64_t kept = 0;
  cudaMemcpy(&kept, count, 8, cudaMemcpyDeviceToHost);
  std::printf("multiples of 3 in 1..100: %llu\n", static_cast<unsigned long long>(kept));
  return kept == 33 ? 0 : 1;
}
