// Scans a cudaMalloc'ed array on the program's own stream, first directly, then inside a
// CUDA graph captured once and replayed on new data. Build: part of the gpuscan build where
// it has the CUDA backend (build/bin/gpuscan_example_cuda_graph).
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include <gpuscan/cuda.hpp>

#define CHECK(call)                                                   \
  do {                                                                \
    if (cudaError_t e = (call); e != cudaSuccess) {                   \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e)); \
      std::exit(1);                                                   \
    }                                                                 \
  } while (0)

int main() {
  const std::size_t n = 1 << 20;
  std::vector<std::uint32_t> host(n, 1);
  std::uint32_t *in = nullptr, *out = nullptr;
  void* workspace = nullptr;
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CHECK(cudaMalloc(reinterpret_cast<void**>(&in), n * sizeof(std::uint32_t)));
  CHECK(cudaMalloc(reinterpret_cast<void**>(&out), n * sizeof(std::uint32_t)));

  // A plan for one kind of scan, and a workspace for up to n elements, zeroed once.
  const gpuscan::cuda::Plan plan({gpuscan::DType::u32, gpuscan::Op::add, gpuscan::Kind::inclusive});
  const std::size_t bytes = plan.workspace_bytes(n);
  CHECK(cudaMalloc(&workspace, bytes));
  CHECK(cudaMemsetAsync(workspace, 0, bytes, stream));

  // Directly on the stream: no allocation, no synchronisation.
  CHECK(cudaMemcpyAsync(in, host.data(), n * 4, cudaMemcpyHostToDevice, stream));
  plan.enqueue(in, out, n, stream, workspace, bytes);

  // Captured once, replayed: everything a run needs between runs lives in the workspace.
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  plan.enqueue(in, out, n, stream, workspace, bytes);
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  std::uint32_t last = 0;
  for (std::uint32_t value = 1; value <= 3; ++value) {
    std::vector<std::uint32_t> data(n, value);
    CHECK(cudaMemcpyAsync(in, data.data(), n * 4, cudaMemcpyHostToDevice, stream));
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaMemcpyAsync(&last, out + n - 1, 4, cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    std::printf("replay %u: last element %u (expected %zu)\n", value, last, n * value);
    if (last != n * value) return 1;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaFree(workspace);
  cudaFree(out);
  cudaFree(in);
  cudaStreamDestroy(stream);
  return 0;
}
