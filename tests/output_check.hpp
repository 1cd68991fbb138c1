// Checks a scan's output against the CPU reference: exactly for integers and for float
// min/max, within DESIGN's tolerance for float sums (|out - ref| <= 1e-5 * sum of |x| so
// far) and products (relative). Needs nothing of a backend, so that a test acting as an
// application with its own Vulkan loader can use it too.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/reference.hpp"
#include "gpuscan/scanner.hpp"

namespace gpuscan::testing {

inline std::string describe(const ScanSpec& spec) {
  std::string text;
  for (std::string_view part : {to_string(spec.dtype), to_string(spec.op), to_string(spec.kind),
                                to_string(spec.algorithm)}) {
    text.append(text.empty() ? "" : " ").append(part);
  }
  return text;
}

inline std::size_t output_elements(const ScanSpec& spec, std::size_t n) {
  return spec.kind == Kind::reduce ? 1 : n;
}

// Checks `output` (bytes of the spec's dtype) against the reference scan of `input`, failing
// the test at the first five wrong elements; returns how many were wrong.
template <class T>
std::size_t check_output_typed(const ScanSpec& spec, std::span<const std::byte> input_bytes,
                               std::size_t n, std::optional<Value> init,
                               std::span<const std::byte> output_bytes) {
  std::vector<T> input(n);
  if (n) std::memcpy(input.data(), input_bytes.data(), n * sizeof(T));
  const std::size_t out_n = output_elements(spec, n);
  std::vector<T> result(out_n);
  if (out_n) std::memcpy(result.data(), output_bytes.data(), out_n * sizeof(T));
  std::optional<T> init_t;
  if (init) init_t = init->as<T>();

  std::size_t wrong = 0;
  const auto report = [&](std::size_t i, const auto& got, const auto& want) {
    if (wrong++ < 5) ADD_FAILURE() << "element " << i << ": got " << got << ", expected " << want;
  };
  if constexpr (std::is_floating_point_v<T>) {
    // Reference in double, and the running sum of |x| the tolerance scales with.
    std::vector<double> wide(input.begin(), input.end());
    std::optional<double> wide_init;
    if (init_t) wide_init = static_cast<double>(*init_t);
    const bool exact_op = spec.op == Op::min || spec.op == Op::max;
    const auto expected = exact_op ? std::vector<double>()
                                   : reference::scan<double>(spec.kind, spec.op, wide, wide_init);
    const auto exact =
        exact_op ? reference::scan<T>(spec.kind, spec.op, input, init_t) : std::vector<T>();
    double sum_abs = init_t ? std::fabs(static_cast<double>(*init_t)) : 0.0;
    for (std::size_t i = 0; i < out_n; ++i) {
      const std::size_t last = spec.kind == Kind::reduce ? n : i + 1;
      for (std::size_t j = (spec.kind == Kind::reduce ? 0 : i); j < last; ++j)
        sum_abs += std::fabs(wide[j]);
      const double want = exact_op ? static_cast<double>(exact[i]) : expected[i];
      const std::size_t position = spec.kind == Kind::reduce ? n : i + 1;  // elements combined
      if (!reference::within_tolerance<T>(spec.op, result[i], want, sum_abs, position))
        report(i, result[i], want);
    }
  } else {
    const auto expected = reference::scan<T>(spec.kind, spec.op, input, init_t);
    for (std::size_t i = 0; i < out_n; ++i) {
      if (result[i] != expected[i]) report(i, +result[i], +expected[i]);
    }
  }
  EXPECT_EQ(wrong, 0u) << "wrong elements of " << out_n;
  return wrong;
}

inline std::size_t check_output(const ScanSpec& spec, std::span<const std::byte> input,
                                std::size_t n, std::optional<Value> init,
                                std::span<const std::byte> output) {
  return reference::visit(spec.dtype, [&](auto tag) {
    return check_output_typed<decltype(tag)>(spec, input, n, init, output);
  });
}

}  // namespace gpuscan::testing
