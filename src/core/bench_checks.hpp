// What a benchmark's checks need to know of its input, shared by every backend: the
// device check's float tolerance, and the reduction a Kind::reduce run must produce.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

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

}  // namespace gpuscan::detail
