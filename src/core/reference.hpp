// The CPU reference: the monoid table on the host, a sequential scan in the operator's
// (earlier, later) order, and seeded random inputs. Tests and benchmarks check against it.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "core/monoid.hpp"
#include "gpuscan/error.hpp"
#include "gpuscan/types.hpp"

namespace gpuscan::reference {

// Sequential scan; Kind::reduce returns one element.
template <class T>
std::vector<T> scan(Kind kind, Op op, std::span<const T> in, std::optional<T> init = {}) {
  T acc = init.value_or(identity<T>(op));
  if (kind == Kind::reduce) {
    for (const T& x : in) acc = combine(op, acc, x);
    return {acc};
  }
  std::vector<T> out(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (kind == Kind::exclusive) out[i] = acc;
    acc = combine(op, acc, in[i]);
    if (kind == Kind::inclusive) out[i] = acc;
  }
  return out;
}

// Whether a device result may stand for the reference value `want` (computed in double)
// at a position where `combined` elements were combined and `sum_abs` is the sum of their
// magnitudes: DESIGN's tolerance for float sums (1e-5 * sum_abs), the worst-case rounding
// of `combined` products for float mul, exact for everything else (min/max round nothing).
template <class T>
bool within_tolerance(Op op, T got, double want, double sum_abs, std::size_t combined) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(want)) return std::isnan(got);
    const double g = static_cast<double>(got);
    if (op == Op::add) return std::fabs(g - want) <= 1e-5 * sum_abs + 1e-30;
    if (op == Op::mul) {
      const double eps = std::numeric_limits<T>::epsilon();
      return std::fabs(g - want) <=
             4.0 * eps * static_cast<double>(combined + 1) * std::fabs(want) + 1e-30;
    }
    return g == want;
  } else {
    (void)op, (void)sum_abs, (void)combined;
    return static_cast<double>(got) == want;
  }
}

// The first element of `output` (bytes of dtype T: n elements, one for Kind::reduce) that
// the reference scan of `input` does not allow, within_tolerance()'s rules; nullopt if
// there is none.
template <class T>
std::optional<std::size_t> first_mismatch(Op op, Kind kind, std::span<const T> input,
                                          std::optional<T> init, std::span<const T> output) {
  const std::size_t out_n = kind == Kind::reduce ? 1 : input.size();
  if (output.size() != out_n) return 0;
  if constexpr (std::is_floating_point_v<T>) {
    // Sums and products in double, against the sum of magnitudes so far; min/max exact.
    const bool exact_op = op == Op::min || op == Op::max;
    std::vector<double> wide(input.begin(), input.end());
    std::optional<double> wide_init;
    if (init) wide_init = static_cast<double>(*init);
    const auto expected =
        exact_op ? std::vector<double>() : scan<double>(kind, op, wide, wide_init);
    const auto exact = exact_op ? scan<T>(kind, op, input, init) : std::vector<T>();
    double sum_abs = init ? std::fabs(static_cast<double>(*init)) : 0.0;
    for (std::size_t i = 0; i < out_n; ++i) {
      const std::size_t last = kind == Kind::reduce ? input.size() : i + 1;
      for (std::size_t j = kind == Kind::reduce ? 0 : i; j < last; ++j)
        sum_abs += std::fabs(wide[j]);
      const double want = exact_op ? static_cast<double>(exact[i]) : expected[i];
      if (!within_tolerance<T>(op, output[i], want, sum_abs, last)) return i;
    }
  } else {
    const auto expected = scan<T>(kind, op, input, init);
    for (std::size_t i = 0; i < out_n; ++i) {
      if (output[i] != expected[i]) return i;
    }
  }
  return std::nullopt;
}

// The same for a batched scan (DESIGN 3f): `input` holds rows of `row_length` elements,
// each scanned on its own from `init`; Kind::reduce has one output per row. The index is
// into `output`.
template <class T>
std::optional<std::size_t> first_mismatch_rows(Op op, Kind kind, std::span<const T> input,
                                               std::size_t row_length, std::optional<T> init,
                                               std::span<const T> output) {
  if (row_length == 0) return input.empty() ? std::nullopt : std::optional<std::size_t>(0);
  const std::size_t rows = input.size() / row_length;
  const std::size_t out_per_row = kind == Kind::reduce ? 1 : row_length;
  if (input.size() % row_length != 0 || output.size() != rows * out_per_row) return 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const auto wrong = first_mismatch<T>(op, kind, input.subspan(r * row_length, row_length), init,
                                         output.subspan(r * out_per_row, out_per_row));
    if (wrong) return r * out_per_row + *wrong;
  }
  return std::nullopt;
}

// The same for a segmented scan (DESIGN 3f): segment s is input[offsets[s], offsets[s + 1]),
// scanned on its own from `init`; Kind::reduce has one output per segment.
template <class T>
std::optional<std::size_t> first_mismatch_segments(Op op, Kind kind, std::span<const T> input,
                                                   std::span<const std::int64_t> offsets,
                                                   std::optional<T> init,
                                                   std::span<const T> output) {
  const std::size_t segments = offsets.empty() ? 0 : offsets.size() - 1;
  if (output.size() != (kind == Kind::reduce ? segments : input.size())) return 0;
  for (std::size_t s = 0; s < segments; ++s) {
    const auto begin = static_cast<std::size_t>(offsets[s]);
    const auto length = static_cast<std::size_t>(offsets[s + 1]) - begin;
    const std::size_t out_begin = kind == Kind::reduce ? s : begin;
    const auto wrong =
        first_mismatch<T>(op, kind, input.subspan(begin, length), init,
                          output.subspan(out_begin, kind == Kind::reduce ? 1 : length));
    if (wrong) return out_begin + *wrong;
  }
  return std::nullopt;
}

// Calls f with a value-initialised T of the dtype (a type tag).
template <class F>
decltype(auto) visit(DType dtype, F&& f) {
  switch (dtype) {
    case DType::i32:
      return f(std::int32_t{});
    case DType::f32:
      return f(float{});
    case DType::u64:
      return f(std::uint64_t{});
    case DType::i64:
      return f(std::int64_t{});
    case DType::f64:
      return f(double{});
    default:
      return f(std::uint32_t{});
  }
}

inline Value identity_value(DType dtype, Op op) {
  return visit(dtype, [op](auto tag) { return Value::of(identity<decltype(tag)>(op)); });
}

// Throws UsageError for an operator the type has no meaning for.
inline void check_op(DType dtype, Op op) {
  if (is_float(dtype) && (op == Op::bit_and || op == Op::bit_or || op == Op::bit_xor)) {
    throw UsageError("operator " + std::string(to_string(op)) + " needs an integer type, not " +
                     std::string(to_string(dtype)));
  }
}

// n random elements for testing `op`, drawn so that running results keep changing: values
// near 1 for mul, mostly-set bits for and, mostly-clear bits for or, [-1, 1) for floats.
std::vector<std::byte> random_input(DType dtype, Op op, std::size_t n, std::uint64_t seed);

}  // namespace gpuscan::reference
