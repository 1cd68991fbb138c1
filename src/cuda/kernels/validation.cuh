// Checks a timed run on the device, so that every run is validated without reading the
// output back: each output element must follow from its predecessor and the input
// (out[i] == out[i-1] + in[i] for an inclusive sum, and a row's first from the init value
// in a batched scan), which by induction proves them all.
// The same rules as shaders/validate.comp.
#pragma once

#include <cmath>

#include "cuda/kernels/tile_io.cuh"
#include "cuda/launch.hpp"

namespace gpuscan::cuda {

template <class M>
__device__ __forceinline__ typename M::T expected(const CheckArgs& c, std::uint64_t i) {
  using T = typename M::T;
  const T* in = static_cast<const T*>(c.in);
  const T* out = static_cast<const T*>(c.out);
  if (c.copy) return in[i];
  const T init = from_bits<T>(c.init_bits);
  const bool start = c.row_length == 0 ? i == 0 : i % c.row_length == 0;  // of a row
  if (c.kind == Kind::exclusive) return start ? init : M::combine(out[i - 1], in[i - 1]);
  return M::combine(start ? init : out[i - 1], in[i]);
}

// Float sums and products round differently in every association; each element may
// differ from its predecessor's continuation by the tolerance (per element for sums,
// relative per element for products). Everything else must match exactly.
template <class M>
__device__ __forceinline__ bool matches(const CheckArgs& c, typename M::T got, typename M::T want,
                                        std::uint64_t i) {
  using T = typename M::T;
  if constexpr (std::is_floating_point_v<T>) {
    if (c.copy) return to_bits(got) == to_bits(want);
    if (c.row_length != 0) i %= c.row_length;  // the elements combined so far in its row
    if (isnan(want)) return isnan(got);
    const T tolerance = static_cast<T>(c.tolerance);
    if (M::op == Op::add) return fabs(got - want) <= tolerance * static_cast<T>(i + 1);
    if (M::op == Op::mul) return fabs(got - want) <= tolerance * static_cast<T>(i + 2) * fabs(want);
  }
  return got == want;
}

template <class M>
__global__ void check_run(CheckArgs c) {
  const typename M::T* out = static_cast<const typename M::T*>(c.out);
  std::uint32_t errors = 0;
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < c.n;
       i += stride) {
    if (!matches<M>(c, out[i], expected<M>(c, i), i)) ++errors;
  }
  if (errors != 0) atomicAdd(c.errors, errors);
}

}  // namespace gpuscan::cuda
