// The public benchmark entry: a seeded random input, then the backend's timed runs.
#include <algorithm>

#include "core/backend.hpp"
#include "core/reference.hpp"

namespace gpuscan {

std::vector<BenchResult> benchmark(Device& device, const BenchCase& bench_case) {
  reference::check_op(bench_case.dtype, bench_case.op);
  if (bench_case.n == 0 || bench_case.runs <= 0)
    throw UsageError("a benchmark needs n >= 1 and runs >= 1");
  const auto input =
      reference::random_input(bench_case.dtype, bench_case.op, bench_case.n, bench_case.seed);
  return device.impl()->benchmark(bench_case, input);
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  if (values.size() % 2 == 1) return *middle;
  return (*middle + *std::max_element(values.begin(), middle)) / 2;
}

}  // namespace gpuscan
