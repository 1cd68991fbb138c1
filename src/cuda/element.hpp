// The element type of a translation unit compiled once per type (GS_CUDA_DTYPE, the codes of
// shaders/common/interface.h; src/CMakeLists.txt sets it): the scan's, the compaction's and
// the CUB compaction baseline's kernel files.
#pragma once

#include <cstdint>

#include "shaders/common/interface.h"

namespace gpuscan::cuda {

#if GS_CUDA_DTYPE == GS_DTYPE_U32
using Element = std::uint32_t;
#elif GS_CUDA_DTYPE == GS_DTYPE_I32
using Element = std::int32_t;
#elif GS_CUDA_DTYPE == GS_DTYPE_F32
using Element = float;
#elif GS_CUDA_DTYPE == GS_DTYPE_U64
using Element = std::uint64_t;
#elif GS_CUDA_DTYPE == GS_DTYPE_I64
using Element = std::int64_t;
#elif GS_CUDA_DTYPE == GS_DTYPE_F64
using Element = double;
#else
#error "GS_CUDA_DTYPE must name an element type of shaders/common/interface.h"
#endif

}  // namespace gpuscan::cuda
