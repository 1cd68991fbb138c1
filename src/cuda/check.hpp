// CUDA runtime errors as gpuscan exceptions.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "gpuscan/error.hpp"

namespace gpuscan::cuda {

inline void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  std::string message = std::string("CUDA error ") + what + ": " + cudaGetErrorString(status);
  if (status == cudaErrorNoKernelImageForDevice || status == cudaErrorUnsupportedPtxVersion) {
    // The kernels were compiled for other GPUs: say which, and how to build for this one.
    message.append(" (this build's kernels are for CUDA architectures " GPUSCAN_CUDA_ARCHITECTURES
                   "; rebuild with -DCMAKE_CUDA_ARCHITECTURES=native on this machine)");
  }
  throw DeviceError(message);
}

}  // namespace gpuscan::cuda
