// What the caller's-memory API costs (gpuscan/cuda.hpp), against CUB on the same stream:
// the host time of one enqueue, a loop of scans on one stream, the same loop captured once
// as a CUDA graph and replayed, and the large-n speed through a Plan against cudaMemcpy.
// Every scanned output of the loops is checked after them (the last run of each).
//
//   gpuscan_interop_bench [CSV]      (n = 2^16 loops of 1000 scans; 2^28 for the speed)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "cuda/launch.hpp"
#include "gpuscan/cuda.hpp"

extern const char* const gpuscan_build_commit;

namespace {

using namespace gpuscan;

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "interop_bench: %s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Milliseconds of `body` on `stream`, between two events, median of `repeats`.
double time_ms(cudaStream_t stream, int repeats, const std::function<void()>& body,
               const std::function<void()>& before = {}) {
  cudaEvent_t start, end;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&end), "event");
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    if (before) before();
    check(cudaEventRecord(start, stream), "record");
    body();
    check(cudaEventRecord(end, stream), "record");
    check(cudaEventSynchronize(end), "sync");
    float t = 0;
    check(cudaEventElapsedTime(&t, start, end), "elapsed");
    ms.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(end);
  return median(ms);
}

// True when out is the inclusive sum of in (n u32 values, checked on the host).
bool sums_right(const void* d_in, const void* d_out, std::size_t n) {
  std::vector<std::uint32_t> in(n), out(n);
  check(cudaMemcpy(in.data(), d_in, n * 4, cudaMemcpyDeviceToHost), "download");
  check(cudaMemcpy(out.data(), d_out, n * 4, cudaMemcpyDeviceToHost), "download");
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sum += in[i];
    if (out[i] != sum) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const int loop = 1000;
  const std::size_t small = std::size_t{1} << 16, large = std::size_t{1} << 28;
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, 0), "properties");

  void *in, *out, *workspace, *cub_temp, *flush;
  check(cudaMalloc(&in, large * 4), "malloc");
  check(cudaMalloc(&out, large * 4), "malloc");
  check(cudaMalloc(&flush, std::size_t{512} << 20), "malloc");
  std::vector<std::uint32_t> host(large);
  for (std::size_t i = 0; i < large; ++i)
    host[i] = static_cast<std::uint32_t>(i * 2654435761u >> 7);
  check(cudaMemcpy(in, host.data(), large * 4, cudaMemcpyHostToDevice), "upload");

  const cuda::Plan plan({DType::u32, Op::add, Kind::inclusive});
  const std::size_t bytes = plan.workspace_bytes(large);
  check(cudaMalloc(&workspace, bytes), "malloc");
  check(cudaMemset(workspace, 0, bytes), "memset");
  const std::size_t cub_bytes = cuda::cub_temp_bytes(DType::u32, Kind::inclusive, large);
  check(cudaMalloc(&cub_temp, cub_bytes), "malloc");
  const auto enqueue = [&](std::size_t n) { plan.enqueue(in, out, n, stream, workspace, bytes); };
  const auto cub = [&](std::size_t n) {
    cuda::launch_cub_sum(DType::u32, Kind::inclusive, in, out, n, cub_temp, cub_bytes, stream);
  };
  for (int i = 0; i < 200; ++i) enqueue(small), cub(small);  // warm up, clocks up
  check(cudaStreamSynchronize(stream), "warm-up");

  // 1. Host time of one enqueue (plan and workspace given), median of 1000 calls,
  // synchronising every 100 so that the launch queue never fills.
  std::vector<double> host_us;
  for (int i = 0; i < loop; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    enqueue(small);
    const auto t1 = std::chrono::steady_clock::now();
    host_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    if (i % 100 == 99) check(cudaStreamSynchronize(stream), "sync");
  }
  check(cudaStreamSynchronize(stream), "sync");
  const double enqueue_us = median(host_us);

  // 2. Loops of 1000 scans of 2^16 on one stream, and the same loops as replayed graphs.
  const double gpuscan_loop = time_ms(stream, 5, [&] {
    for (int i = 0; i < loop; ++i) enqueue(small);
  });
  const bool gpuscan_loop_ok = sums_right(in, out, small);
  const double cub_loop = time_ms(stream, 5, [&] {
    for (int i = 0; i < loop; ++i) cub(small);
  });
  const bool cub_loop_ok = sums_right(in, out, small);
  const auto graph_of = [&](const std::function<void()>& body) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "capture");
    for (int i = 0; i < loop; ++i) body();
    check(cudaStreamEndCapture(stream, &graph), "capture");
    check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
    cudaGraphDestroy(graph);
    return exec;
  };
  cudaGraphExec_t gpuscan_graph = graph_of([&] { enqueue(small); });
  cudaGraphExec_t cub_graph = graph_of([&] { cub(small); });
  check(cudaMemset(out, 0, small * 4), "memset");
  const double gpuscan_graph_ms =
      time_ms(stream, 5, [&] { check(cudaGraphLaunch(gpuscan_graph, stream), "launch"); });
  const bool gpuscan_graph_ok = sums_right(in, out, small);
  check(cudaMemset(out, 0, small * 4), "memset");
  const double cub_graph_ms =
      time_ms(stream, 5, [&] { check(cudaGraphLaunch(cub_graph, stream), "launch"); });
  const bool cub_graph_ok = sums_right(in, out, small);

  // 3. Large n through the Plan against cudaMemcpy and CUB, L2 flushed before each run.
  const auto flushed = [&] {
    check(cudaMemsetAsync(flush, 1, std::size_t{512} << 20, stream), "flush");
  };
  const double plan_large = time_ms(
      stream, 20, [&] { enqueue(large); }, flushed);
  const bool large_ok = sums_right(in, out, large);
  const double copy_large = time_ms(
      stream, 20,
      [&] { check(cudaMemcpyAsync(out, in, large * 4, cudaMemcpyDeviceToDevice, stream), "copy"); },
      flushed);
  const double cub_large = time_ms(
      stream, 20, [&] { cub(large); }, flushed);

  const bool ok = gpuscan_loop_ok && cub_loop_ok && gpuscan_graph_ok && cub_graph_ok && large_ok;
  std::printf("device: %s\n", properties.name);
  std::printf("enqueue host time, 2^16 u32, median of %d calls: %.2f us\n", loop, enqueue_us);
  std::printf("loop of %d scans of 2^16 on one stream: gpuscan %.3f ms, CUB %.3f ms, ratio %.3f\n",
              loop, gpuscan_loop, cub_loop, gpuscan_loop / cub_loop);
  std::printf("the same loop as a replayed graph: gpuscan %.3f ms, CUB %.3f ms, ratio %.3f\n",
              gpuscan_graph_ms, cub_graph_ms, gpuscan_graph_ms / cub_graph_ms);
  std::printf(
      "2^28 u32 through a Plan: %.4f ms, %.3f of cudaMemcpy (%.4f ms), %.3fx CUB (%.4f ms)\n",
      plan_large, copy_large / plan_large, copy_large, cub_large / plan_large, cub_large);
  std::printf("outputs checked: %s\n", ok ? "all right" : "WRONG");
  if (argc > 1) {
    FILE* csv = std::fopen(argv[1], "w");
    if (!csv) {
      std::perror(argv[1]);
      return 1;
    }
    // The DESIGN schema; `algorithm` names the implementation and the measure (the
    // bench/results README says which is which). Loop and graph rows give the time of one
    // scan of the loop (the median loop over its 1000 scans); validated counts the checked
    // last outputs.
    std::fprintf(csv,
                 "date,commit,device,backend,algorithm,dtype,op,kind,n,runs,median_ms,"
                 "gelems_per_s,vs_memcpy,validated,blocking_mask,spins,lookback_steps,"
                 "fallbacks,insertions\n");
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    const auto row = [&](const char* algorithm, std::size_t n, int runs, double ms, double vs,
                         bool validated) {
      std::fprintf(csv, "%s,%s,%s,cuda,%s,u32,add,inclusive,%zu,%d,%.6f,%.4f,", date,
                   gpuscan_build_commit, properties.name, algorithm, n, runs, ms,
                   static_cast<double>(n) / (ms * 1e-3) * 1e-9);
      if (vs > 0) std::fprintf(csv, "%.4f", vs);
      std::fprintf(csv, ",%d,,,,,\n", validated ? runs : 0);
    };
    row("csdldf-enqueue-host", small, loop, enqueue_us / 1000, 0, ok);
    row("csdldf-stream-loop", small, 5, gpuscan_loop / loop, 0, gpuscan_loop_ok);
    row("cub-stream-loop", small, 5, cub_loop / loop, 0, cub_loop_ok);
    row("csdldf-graph-loop", small, 5, gpuscan_graph_ms / loop, 0, gpuscan_graph_ok);
    row("cub-graph-loop", small, 5, cub_graph_ms / loop, 0, cub_graph_ok);
    row("csdldf-plan", large, 20, plan_large, copy_large / plan_large, large_ok);
    row("memcpy", large, 20, copy_large, 1.0, true);
    row("cub", large, 20, cub_large, copy_large / cub_large, true);
    std::fclose(csv);
  }
  return ok ? 0 : 1;
}
