// Benchmarking: timed, validated runs of several implementations on one input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "gpuscan/device.hpp"
#include "gpuscan/scanner.hpp"

namespace gpuscan {

// What a benchmark can time: the three scan algorithms, the copy baseline (the memcpy
// kernel on Vulkan, cudaMemcpyAsync on CUDA) and, on CUDA, NVIDIA's CUB (sums only).
enum class Implementation { csdldf, csdl, rts, memcpy, cub };
std::string_view to_string(Implementation);
std::optional<Implementation> parse_implementation(std::string_view);

struct BenchCase {
  DType dtype = DType::u32;
  Op op = Op::add;
  Kind kind = Kind::inclusive;
  std::size_t n = 0;
  int runs = 0;      // timed runs per implementation (after one untimed warm-up)
  bool hot = false;  // skip the cache flush between runs
  // CUDA: after the flush, one untimed run of the same implementation on a second input of
  // the same size, so that each timed run finds its code in the caches and its data not.
  bool warm_code = false;
  std::uint64_t seed = 0;  // of the random input
  Tuning tuning;
  std::vector<Implementation> implementations;
};

struct BenchResult {
  Implementation implementation = Implementation::memcpy;
  std::vector<double> ms;  // device time of each timed run
  int validated = 0;       // runs whose output the device checked and found right
  // csdl runs whose look-back gave up waiting for a predecessor (no forward progress on
  // this device); their output is wrong and they are not among the validated.
  int abandoned = 0;
  std::vector<Statistics> statistics;  // per run, with Tuning::statistics for csdl/csdldf
};

// Runs every implementation of the case on the same random input. Outputs are poisoned
// before each run and checked on the device after it.
std::vector<BenchResult> benchmark(Device& device, const BenchCase& bench_case);

double median(std::vector<double> values);

}  // namespace gpuscan
