// What a benchmark's checks need to know of its input, shared by every backend: the
// device check's float tolerance, and the reduction a Kind::reduce run must produce.
#pragma once

#include <cstddef>
#include <functional>
#include <span>

#include "gpuscan/bench.hpp"

namespace gpuscan::detail {

struct InputFacts {
  float tolerance = 0;
  std::function<bool(const std::byte*)> reduction_acceptable;
};

InputFacts input_facts(const BenchCase& c, std::span<const std::byte> input);

}  // namespace gpuscan::detail
