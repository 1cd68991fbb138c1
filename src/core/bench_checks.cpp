#include "core/bench_checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/reference.hpp"

namespace gpuscan::detail {

InputFacts input_facts(const BenchCase& c, std::span<const std::byte> input) {
  return reference::visit(c.dtype, [&](auto tag) {
    using T = decltype(tag);
    const std::span<const T> x(reinterpret_cast<const T*>(input.data()), c.n);
    InputFacts facts;
    double max_abs = 0, sum_abs = 0;
    for (const T& v : x) {
      const double a = std::fabs(static_cast<double>(v));
      max_abs = std::max(max_abs, a);
      sum_abs += a;
    }
    if (is_float(c.dtype)) {
      if (c.op == Op::add) facts.tolerance = static_cast<float>(1e-5 * max_abs);
      if (c.op == Op::mul)
        facts.tolerance = static_cast<float>(4.0 * std::numeric_limits<T>::epsilon());
    }
    double want = 0;
    if (c.kind == Kind::reduce) {
      if constexpr (std::is_floating_point_v<T>) {
        if (c.op == Op::min || c.op == Op::max) {
          want = static_cast<double>(reference::scan(Kind::reduce, c.op, x)[0]);  // exact
        } else {
          const std::vector<double> wide(x.begin(), x.end());
          want = reference::scan<double>(Kind::reduce, c.op, wide)[0];
        }
      } else {
        // Integers compare exactly, as bits (doubles cannot hold every 64-bit value).
        const T exact = reference::scan(Kind::reduce, c.op, x)[0];
        facts.reduction_acceptable = [exact](const std::byte* got) {
          return std::memcmp(got, &exact, sizeof(T)) == 0;
        };
        return facts;
      }
    }
    const Op op = c.op;
    const std::size_t n = c.n;
    facts.reduction_acceptable = [=](const std::byte* got) {
      T value;
      std::memcpy(&value, got, sizeof(T));
      return reference::within_tolerance<T>(op, value, want, sum_abs, n);
    };
    return facts;
  });
}

std::optional<CopyRateWatch::SlowCopy> CopyRateWatch::note(std::size_t n, double ms) {
  if (!(ms > 0)) return std::nullopt;
  const double rate = static_cast<double>(n) / ms;
  // The fastest rate noted at a smaller n.
  std::optional<std::pair<std::size_t, double>> fastest;
  for (const auto& [m, earlier] : rates_) {
    if (m < n && (!fastest || earlier > fastest->second)) fastest = {m, earlier};
  }
  rates_.emplace_back(n, rate);
  if (!fastest || rate >= kSlowest * fastest->second) return std::nullopt;
  return SlowCopy{fastest->first, rate / fastest->second};
}

}  // namespace gpuscan::detail
