// The compaction benchmark's baseline for one element type, GS_CUDA_DTYPE: CUB's
// counterpart of each operation on the same buffers (DeviceSelect::If / Flagged / Unique,
// DevicePartition::If / Flagged, DeviceRunLengthEncode::Encode), the predicate `x < constant`, the
// benchmark's only one. CUB's partition writes one array (the rejected reversed at its
// end) where ours writes two: the same bytes.
#include <cstring>
#include <cub/device/device_partition.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_select.cuh>

#include "cuda/check.hpp"
#include "cuda/compaction_launch.hpp"
#include "cuda/element.hpp"

namespace gpuscan::cuda {
namespace {

template <class T>
struct Below {
  T constant;
  __device__ __forceinline__ bool operator()(const T& x) const { return x < constant; }
};

}  // namespace

template <class T>
std::size_t launch_cub_compaction(const CompactArgs& a, void* temp, std::size_t temp_bytes,
                                  cudaStream_t stream) {
  const T* in = static_cast<const T*>(a.in);
  T* out = static_cast<T*>(a.out);
  Below<T> below;
  std::memcpy(&below.constant, &a.constant_bits, sizeof(T));
  const auto n = static_cast<std::int64_t>(a.n);
  cudaError_t status = cudaSuccess;
  switch (a.compaction) {
    case Compaction::select_if:
      status = cub::DeviceSelect::If(temp, temp_bytes, in, out, a.count, n, below, stream);
      break;
    case Compaction::select_flagged:
      status = cub::DeviceSelect::Flagged(temp, temp_bytes, in,
                                          static_cast<const std::uint32_t*>(a.flags), out, a.count,
                                          n, stream);
      break;
    case Compaction::unique:
      status = cub::DeviceSelect::Unique(temp, temp_bytes, in, out, a.count, n, stream);
      break;
    case Compaction::partition:
      status = cub::DevicePartition::If(temp, temp_bytes, in, out, a.count, n, below, stream);
      break;
    case Compaction::partition_flagged:
      status = cub::DevicePartition::Flagged(temp, temp_bytes, in,
                                             static_cast<const std::uint32_t*>(a.flags), out,
                                             a.count, n, stream);
      break;
    case Compaction::run_length_encode:
      status = cub::DeviceRunLengthEncode::Encode(temp, temp_bytes, in, out,
                                                  static_cast<std::uint64_t*>(a.second), a.count,
                                                  static_cast<int>(n), stream);
      break;
  }
  check(status, "running CUB's compaction");
  return temp_bytes;
}

template std::size_t launch_cub_compaction<Element>(const CompactArgs&, void*, std::size_t,
                                                    cudaStream_t);

}  // namespace gpuscan::cuda
