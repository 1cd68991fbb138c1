// Thread level: the monoid of a kernel instantiation, from the table shared with the host
// reference (core/monoid.hpp), with the operator fixed at compile time so that the switch
// folds away.
#pragma once

#include "core/monoid.hpp"

namespace gpuscan::cuda {

template <class Element, Op kOp>
struct Monoid {
  using T = Element;
  static constexpr Op op = kOp;
  __device__ __forceinline__ static T identity() { return reference::identity<T>(kOp); }
  __device__ __forceinline__ static T combine(T earlier, T later) {
    return reference::combine<T>(kOp, earlier, later);
  }
};

}  // namespace gpuscan::cuda
