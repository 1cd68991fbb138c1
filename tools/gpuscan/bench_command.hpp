// `gpuscan bench`: timed, validated runs over a size sweep, as a table and a CSV.
#pragma once

#include <string>
#include <vector>

#include "gpuscan/gpuscan.hpp"
#include "gpuscan/testing.hpp"

namespace gpuscan::cli {

struct BenchOptions {
  Backend backend = Backend::any;
  std::string device;
  DType dtype = DType::u32;
  Op op = Op::add;
  Kind kind = Kind::inclusive;
  // Empty: csdldf, csdl, rts, memcpy, and cub on CUDA for sums.
  std::vector<testing::Implementation> implementations;
  std::string sizes;  // "lo:hi" powers of two, or a list "n1,n2,..."; empty: device default
  // Batched scans instead of sizes: "BxN,BxN,..." (rows x row length), or "table" for the
  // shapes of DESIGN section 8's batched target.
  std::string shapes;
  int runs = 0;  // 0: device default
  bool hot = false;
  bool warm_code = false;  // CUDA: an untimed run on another input before each timed one
  // Also run csdldf with 1 in 2^k tiles blocked, k = 0..9 (DESIGN section 5).
  bool blocking = false;
  std::uint64_t seed = 1;
  testing::Options options;
  std::string csv;
};

// Returns the process exit status: 0 when every run validated.
int run_bench(const BenchOptions& options);

}  // namespace gpuscan::cli
