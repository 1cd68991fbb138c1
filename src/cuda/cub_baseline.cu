// The benchmark's baseline: NVIDIA's CUB on the same buffers, through its tuned sum path
// (cuda::std::plus). Sums only; the benchmark runs it where the case is a sum.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>

#include "core/reference.hpp"
#include "cuda/check.hpp"
#include "cuda/launch.hpp"

namespace gpuscan::cuda {
namespace {

// Runs CUB (temp == nullptr: only asks for its temporary storage size).
template <class T>
void cub_sum(Kind kind, const void* in, void* out, std::uint64_t n, void* temp, std::size_t& bytes,
             cudaStream_t stream) {
  const T* x = static_cast<const T*>(in);
  T* y = static_cast<T*>(out);
  cudaError_t status = cudaSuccess;
  switch (kind) {
    case Kind::exclusive:
      status = cub::DeviceScan::ExclusiveSum(temp, bytes, x, y, n, stream);
      break;
    case Kind::reduce:
      status = cub::DeviceReduce::Sum(temp, bytes, x, y, n, stream);
      break;
    default:
      status = cub::DeviceScan::InclusiveSum(temp, bytes, x, y, n, stream);
      break;
  }
  check(status, "running CUB");
}

// A batched sum's keys: element i's row, computed as it is read, so that CUB reads no key
// array (its best path for rows in the toolkit: DeviceScan::*SumByKey).
struct RowOf {
  std::uint64_t length;
  __host__ __device__ std::uint64_t operator()(std::uint64_t i) const { return i / length; }
};

template <class T>
void cub_rows_sum(Kind kind, const void* in, void* out, std::uint64_t n, std::uint64_t row_length,
                  void* temp, std::size_t& bytes, cudaStream_t stream) {
  const T* x = static_cast<const T*>(in);
  T* y = static_cast<T*>(out);
  const auto keys = thrust::make_transform_iterator(thrust::counting_iterator<std::uint64_t>(0),
                                                    RowOf{row_length});
  cudaError_t status = cudaSuccess;
  if (kind == Kind::exclusive) {
    status = cub::DeviceScan::ExclusiveSumByKey(temp, bytes, keys, x, y, n,
                                                ::cuda::std::equal_to<>{}, stream);
  } else {
    status = cub::DeviceScan::InclusiveSumByKey(temp, bytes, keys, x, y, n,
                                                ::cuda::std::equal_to<>{}, stream);
  }
  check(status, "running CUB");
}

}  // namespace

std::size_t cub_rows_temp_bytes(DType dtype, Kind kind, std::uint64_t n, std::uint64_t row_length) {
  std::size_t bytes = 0;
  reference::visit(dtype, [&](auto tag) {
    cub_rows_sum<decltype(tag)>(kind, nullptr, nullptr, n, row_length, nullptr, bytes, nullptr);
  });
  return bytes;
}

void launch_cub_rows_sum(DType dtype, Kind kind, const void* in, void* out, std::uint64_t n,
                         std::uint64_t row_length, void* temp, std::size_t temp_bytes,
                         cudaStream_t stream) {
  reference::visit(dtype, [&](auto tag) {
    cub_rows_sum<decltype(tag)>(kind, in, out, n, row_length, temp, temp_bytes, stream);
  });
}

std::size_t cub_temp_bytes(DType dtype, Kind kind, std::uint64_t n) {
  std::size_t bytes = 0;
  reference::visit(dtype, [&](auto tag) {
    cub_sum<decltype(tag)>(kind, nullptr, nullptr, n, nullptr, bytes, nullptr);
  });
  return bytes;
}

void launch_cub_sum(DType dtype, Kind kind, const void* in, void* out, std::uint64_t n, void* temp,
                    std::size_t temp_bytes, cudaStream_t stream) {
  reference::visit(
      dtype, [&](auto tag) { cub_sum<decltype(tag)>(kind, in, out, n, temp, temp_bytes, stream); });
}

}  // namespace gpuscan::cuda
