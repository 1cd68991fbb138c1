// The benchmark loop, the same on every backend: a seeded random input, untimed warm-up
// runs, then the timed runs taking turns between the implementations (run r of each, then
// run r + 1, so that a slow spell of the device hits them alike), each one prepared
// (output poisoned, cache flushed), timed, checked on the device and judged here.
#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "core/backend.hpp"
#include "core/bench_checks.hpp"
#include "core/reference.hpp"

namespace gpuscan::testing {

std::vector<BenchResult> benchmark(Device& device, const BenchCase& c) {
  reference::check_op(c.dtype, c.op);
  if (c.n == 0 || c.runs <= 0) throw UsageError("a benchmark needs n >= 1 and runs >= 1");
  if (c.implementations.empty()) throw UsageError("a benchmark needs an implementation");
  if (c.row_length != 0 && (c.n % c.row_length != 0 || c.kind == Kind::reduce)) {
    throw UsageError(
        "a batched benchmark takes whole rows (n a multiple of the row length) and scans them "
        "(inclusive or exclusive; a reduction per row has no device check)");
  }
  const auto input = reference::random_input(c.dtype, c.op, c.n, c.seed);
  const detail::InputFacts facts = detail::input_facts(c, input);

  const std::unique_ptr<detail::BenchTarget> target = device.impl()->bench_target(c, input);
  for (const Implementation implementation : c.implementations) target->add(implementation);
  target->warm_up();

  const std::size_t k = c.implementations.size();
  const std::size_t slots = static_cast<std::size_t>(c.runs) * k;
  target->timed_runs(slots, [&] {
    for (std::size_t slot = 0; slot < slots; ++slot) {
      target->prepare(slot, slot % k);
      target->run(slot, slot % k);
      target->verify(slot, slot % k, facts.tolerance);
    }
  });

  std::vector<BenchResult> results;
  for (std::size_t i = 0; i < k; ++i) {
    BenchResult result{c.implementations[i], {}, 0, 0, {}};
    for (std::size_t slot = i; slot < slots; slot += k) {
      const detail::BenchTarget::Record record = target->record(slot);
      result.ms.push_back(record.ms);
      std::array<std::byte, sizeof(record.first)> first{};
      std::memcpy(first.data(), &record.first, sizeof(record.first));
      detail::count_run(result, c, facts, record.abandoned, record.check_errors, first.data());
      if (target->counts_statistics(i)) result.statistics.push_back(record.statistics);
    }
    results.push_back(std::move(result));
  }
  return results;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  if (values.size() % 2 == 1) return *middle;
  return (*middle + *std::max_element(values.begin(), middle)) / 2;
}

}  // namespace gpuscan::testing
