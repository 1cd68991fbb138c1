// The monoid table itself (core/monoid.hpp), on the host: the CPU reference and the CUDA
// kernels both use it (the GLSL shaders mirror it; scan_suite_test.cpp's ScanFloatEdges
// checks them on devices). Each identity must leave every operand unchanged, bit for bit:
// signed zeros and NaNs too, where a float identity most easily goes wrong.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/monoid.hpp"
#include "core/reference.hpp"

namespace gpuscan::reference {
namespace {

template <class T>
bool same(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return std::signbit(a) == std::signbit(b) && a == b;
  } else {
    return a == b;
  }
}

template <class T>
std::vector<T> operands() {
  using L = std::numeric_limits<T>;
  if constexpr (std::is_floating_point_v<T>) {
    return {T(0),           -T(0),           T(1),     T(-2.5),    L::infinity(), -L::infinity(),
            L::quiet_NaN(), L::denorm_min(), L::max(), L::lowest()};
  } else {
    return {T(0), T(1), T(7), L::max(), L::lowest(), static_cast<T>(L::max() / 3)};
  }
}

template <class T>
void expect_identities(const std::vector<Op>& ops) {
  for (Op op : ops) {
    for (T x : operands<T>()) {
      const T e = identity<T>(op);
      EXPECT_TRUE(same(combine(op, e, x), x))
          << to_string(op) << ": identity " << e << " combined with " << x << " gave "
          << combine(op, e, x);
      EXPECT_TRUE(same(combine(op, x, e), x))
          << to_string(op) << ": " << x << " combined with identity " << e << " gave "
          << combine(op, x, e);
    }
  }
}

const std::vector<Op> float_ops{Op::add, Op::mul, Op::min, Op::max};
const std::vector<Op> integer_ops{Op::add,     Op::mul,    Op::min,    Op::max,
                                  Op::bit_and, Op::bit_or, Op::bit_xor};

TEST(Monoid, IdentitiesLeaveEveryOperandUnchanged) {
  expect_identities<float>(float_ops);
  expect_identities<double>(float_ops);
  expect_identities<std::uint32_t>(integer_ops);
  expect_identities<std::int32_t>(integer_ops);
  expect_identities<std::uint64_t>(integer_ops);
  expect_identities<std::int64_t>(integer_ops);
}

// IEEE 754's identity for addition is -0.0: +0.0 + -0.0 is +0.0.
TEST(Monoid, FloatSumsKeepTheSignOfZero) {
  const std::vector<float> zeros{-0.0f, -0.0f, -0.0f};
  for (float x : scan<float>(Kind::inclusive, Op::add, zeros)) EXPECT_TRUE(std::signbit(x));
  for (float x : scan<float>(Kind::exclusive, Op::add, zeros, -0.0f)) EXPECT_TRUE(std::signbit(x));
  EXPECT_TRUE(std::signbit(scan<double>(Kind::reduce, Op::add, std::vector<double>{-0.0})[0]));
  // A +0.0 anywhere makes the sum +0.0, as in numpy.
  EXPECT_FALSE(std::signbit(scan<float>(Kind::reduce, Op::add, std::vector{-0.0f, 0.0f})[0]));
}

// Min and max ignore a NaN operand unless both are NaN, so a run of NaNs reduces to NaN
// (numpy's fmin/fmax), and a number after it wins.
TEST(Monoid, FloatMinMaxOfNaNsIsNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (Op op : {Op::min, Op::max}) {
    EXPECT_TRUE(std::isnan(scan<float>(Kind::reduce, op, std::vector{nan, nan})[0]));
    EXPECT_TRUE(std::isnan(scan<double>(Kind::reduce, op, std::vector<double>{nan})[0]));
    const auto inclusive = scan<float>(Kind::inclusive, op, std::vector{nan, nan, 2.0f, nan});
    EXPECT_TRUE(std::isnan(inclusive[0]) && std::isnan(inclusive[1]));
    EXPECT_EQ(inclusive[2], 2.0f);
    EXPECT_EQ(inclusive[3], 2.0f);
  }
}

}  // namespace
}  // namespace gpuscan::reference
