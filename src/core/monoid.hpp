// The monoid table: each operator's identity and how it combines (earlier, later). One
// definition for the host reference and the CUDA kernels (the GLSL shaders mirror it in
// shaders/common/monoid.glsl), so that every backend is checked against the same rules.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

#include "gpuscan/types.hpp"

#ifdef __CUDACC__
#define GS_HOST_DEVICE __host__ __device__
#else
#define GS_HOST_DEVICE
#endif

namespace gpuscan::reference {

// Each identity e satisfies combine(e, x) == x for every x, floats included (IEEE 754):
// for float add it is -0.0, since +0.0 + -0.0 is +0.0 (an exclusive scan's first element,
// or a sum over -0.0 values only, would lose its sign); for float min/max it is NaN, since
// fmin/fmax ignore a NaN operand, so a reduction over NaNs only is NaN as with numpy's
// fmin/fmax (an infinity would turn it into that infinity). See docs/semantics.md.
template <class T>
GS_HOST_DEVICE constexpr T identity(Op op) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case Op::mul:
        return T(1);
      case Op::min:
      case Op::max:
        return std::numeric_limits<T>::quiet_NaN();
      default:
        return -T(0);
    }
  } else {
    switch (op) {
      case Op::mul:
        return T(1);
      case Op::min:
        return std::numeric_limits<T>::max();
      case Op::max:
        return std::numeric_limits<T>::lowest();
      case Op::bit_and:
        return static_cast<T>(~0ull);
      default:
        return T(0);
    }
  }
}

template <class T>
GS_HOST_DEVICE T combine(Op op, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case Op::mul:
        return a * b;
      case Op::min:
        return std::fmin(a, b);  // a NaN operand is ignored unless both are NaN
      case Op::max:
        return std::fmax(a, b);
      default:
        return a + b;
    }
  } else {
    // Integer add and mul wrap: compute in the unsigned type of the same width.
    using U = std::make_unsigned_t<T>;
    const U x = static_cast<U>(a), y = static_cast<U>(b);
    switch (op) {
      case Op::mul:
        return static_cast<T>(static_cast<U>(x * y));
      case Op::min:
        return a < b ? a : b;
      case Op::max:
        return a < b ? b : a;
      case Op::bit_and:
        return static_cast<T>(x & y);
      case Op::bit_or:
        return static_cast<T>(x | y);
      case Op::bit_xor:
        return static_cast<T>(x ^ y);
      default:
        return static_cast<T>(static_cast<U>(x + y));
    }
  }
}

}  // namespace gpuscan::reference
