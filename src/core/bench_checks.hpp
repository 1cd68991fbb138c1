// What a benchmark's checks need to know of its input, shared by every backend: the
// device check's float tolerance, and the reduction a Kind::reduce run must produce.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "gpuscan/testing.hpp"

namespace gpuscan::detail {

using testing::BenchCase;
using testing::BenchResult;
using testing::Implementation;

struct InputFacts {
  float tolerance = 0;
  std::function<bool(const std::byte*)> reduction_acceptable;
};

InputFacts input_facts(const BenchCase& c, std::span<const std::byte> input);

// Whether the device check covers a run (every element follows from its predecessor); a
// reduction's one output is instead compared with InputFacts::reduction_acceptable.
inline bool checked_on_device(const BenchCase& c, Implementation implementation) {
  return c.kind != Kind::reduce || implementation == Implementation::memcpy;
}

// Counts one timed run into `result`: abandoned (a csdl look-back gave up), validated (the
// device check found no error and, for a reduction, `first` is acceptable), or neither.
inline void count_run(BenchResult& result, const BenchCase& c, const InputFacts& facts,
                      std::uint32_t abandoned, std::uint32_t check_errors, const std::byte* first) {
  if (abandoned != 0) {
    ++result.abandoned;
  } else if (check_errors == 0 &&
             (checked_on_device(c, result.implementation) || facts.reduction_acceptable(first))) {
    ++result.validated;
  }
}

// Watches memcpy over a sweep for a size the device ran slow for as a whole. A copy of fewer
// bytes is never much faster: over every committed sweep, memcpy's rate at an n stayed above
// 0.86 of its best at a smaller n of the same run. Below kSlowest of it, the device was slow for
// that size (its clock not yet up after the host's idle spell, throttling; docs/performance.md,
// "How it is measured"), and every ratio at that size with it.
class CopyRateWatch {
 public:
  static constexpr double kSlowest = 0.75;
  struct SlowCopy {
    std::size_t faster_n;  // the smaller n whose rate this one falls short of
    double share;          // this rate over that one
  };
  // Notes memcpy's median time `ms` at `n` elements; a SlowCopy if its rate is below kSlowest
  // of the best rate noted at a smaller n.
  std::optional<SlowCopy> note(std::size_t n, double ms);

 private:
  std::vector<std::pair<std::size_t, double>> rates_;  // n, elements a millisecond
};

}  // namespace gpuscan::detail
