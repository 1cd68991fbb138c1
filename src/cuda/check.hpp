// CUDA runtime errors as gpuscan exceptions.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "gpuscan/error.hpp"

namespace gpuscan::cuda {

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw DeviceError(std::string("CUDA error ") + what + ": " + cudaGetErrorString(status));
  }
}

}  // namespace gpuscan::cuda
