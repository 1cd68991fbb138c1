// What the runs on the caller's memory share (gpuscan/cuda.hpp's Plan, gpuscan/
// cuda_compaction.hpp's CompactPlan): the device switch, the device's tuning row, and the
// overlap test behind the refusals of in-place runs.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "cuda/check.hpp"
#include "cuda/policy.hpp"

namespace gpuscan::cuda {

// Makes `device` current for the scope, and restores the caller's device after.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    check(cudaGetDevice(&previous_), "reading the current device");
    if (device != previous_) check(cudaSetDevice(device), "selecting the device");
    switched_ = device != previous_;
  }
  ~DeviceScope() {
    if (switched_) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
  bool switched_ = false;
};

inline int current_device() {
  int device = 0;
  check(cudaGetDevice(&device), "reading the current device");
  return device;
}

// `device`, or the current one for -1; refused where there is no such device.
inline int checked_device(int device) {
  if (device < 0) device = current_device();
  int count = 0;
  check(cudaGetDeviceCount(&count), "counting CUDA devices");
  if (device >= count) {
    throw UsageError("no CUDA device " + std::to_string(device) + " (" + std::to_string(count) +
                     " found)");
  }
  return device;
}

inline const detail::ScanPolicy& policy_of(int device, DType dtype) {
  int major = 0, minor = 0;
  check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
        "reading the compute capability");
  check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device),
        "reading the compute capability");
  return policy_for(major, minor, dtype);
}

inline bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return x < y + b_bytes && y < x + a_bytes;
}

inline bool aligned(const void* p, std::size_t alignment) {
  return reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
}

}  // namespace gpuscan::cuda
