// One backend's side of a benchmark. core/bench.cpp owns the loop (what runs when, and
// how each run is judged); a backend owns the case's buffers, a prepared launch per
// implementation, its timer and its device check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "gpuscan/testing.hpp"

namespace gpuscan::detail {

class BenchTarget {
 public:
  virtual ~BenchTarget() = default;

  // Prepares the next implementation (its index: the number added before it). Throws
  // UsageError for one this backend cannot run.
  virtual void add(testing::Implementation implementation) = 0;
  // Whether runs of implementation i count look-back statistics.
  virtual bool counts_statistics(std::size_t i) const = 0;
  // Untimed runs of every implementation: code loaded, pipelines built, clocks up.
  virtual void warm_up() = 0;

  // Calls `body`, in which the calls below record (Vulkan) or enqueue (CUDA) the `slots`
  // timed runs, then waits for all of them.
  virtual void timed_runs(std::size_t slots, const std::function<void()>& body) = 0;
  // Before slot's run of implementation i: poison the output, clear the run's counts,
  // flush the cache (unless hot) and, with warm_code, an untimed run on a second input.
  virtual void prepare(std::size_t slot, std::size_t i) = 0;
  // The timed run itself, bracketed by the slot's timer marks.
  virtual void run(std::size_t slot, std::size_t i) = 0;
  // The device check of the run (`tolerance` for float sums and products, as in
  // core/bench_checks.hpp) and the read-back of its counts and first output element.
  virtual void verify(std::size_t slot, std::size_t i, float tolerance) = 0;

  // What a finished slot left.
  struct Record {
    double ms = 0;
    std::uint32_t abandoned = 0;     // csdl look-backs that gave up
    std::uint32_t check_errors = 0;  // elements the device check found wrong
    Statistics statistics;           // with counts_statistics
    std::uint64_t first = 0;         // the first output element's bits (a reduction)
  };
  virtual Record record(std::size_t slot) const = 0;
};

}  // namespace gpuscan::detail
