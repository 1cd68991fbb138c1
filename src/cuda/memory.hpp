// Device memory owned by one object, freed with it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>

#include "core/backend.hpp"
#include "cuda/check.hpp"

namespace gpuscan::cuda {

class DeviceMemory : public detail::BufferImpl {
 public:
  DeviceMemory() = default;
  explicit DeviceMemory(std::size_t bytes) : bytes_(bytes) {
    // Rounded up so that a vector access at the end of any buffer stays inside it.
    const cudaError_t status = cudaMalloc(&data_, (bytes + 15) & ~std::size_t{15});
    if (status != cudaSuccess) {
      throw DeviceError("cannot allocate " + std::to_string(bytes) +
                        " bytes of CUDA memory: " + cudaGetErrorString(status));
    }
  }
  ~DeviceMemory() override {
    if (data_) cudaFree(data_);
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  DeviceMemory(DeviceMemory&& other) noexcept { swap(other); }
  DeviceMemory& operator=(DeviceMemory&& other) noexcept {
    swap(other);
    return *this;
  }

  std::size_t size() const override { return bytes_; }
  void* data() const { return data_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  void swap(DeviceMemory& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
  }
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace gpuscan::cuda
