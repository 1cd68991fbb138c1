// What the CUDA-only test programs share: a fixture that skips (saying why) where there is no
// CUDA GPU, device memory freed with its object, and CUDA_OK. Seeds: seed.hpp.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstddef>

#include "seed.hpp"

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

namespace gpuscan::testing {

class CudaGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      cudaGetLastError();
      GTEST_SKIP() << "needs a CUDA GPU: none found (no driver or no device)";
    }
  }
};

// Device memory freed with the object (at least one byte).
struct Memory {
  void* p = nullptr;
  explicit Memory(std::size_t bytes) { EXPECT_EQ(cudaMalloc(&p, bytes ? bytes : 1), cudaSuccess); }
  ~Memory() { cudaFree(p); }
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;
  std::byte* bytes() const { return static_cast<std::byte*>(p); }
  template <class T>
  T* as() const {
    return static_cast<T*>(p);
  }
};

}  // namespace gpuscan::testing
