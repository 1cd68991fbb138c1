// `gpuscan scan IN.npy OUT.npy`: one scan or reduction of a .npy array on a device.
#pragma once

#include <optional>
#include <string>

#include "gpuscan/gpuscan.hpp"

namespace gpuscan::cli {

struct ScanOptions {
  std::string input;
  std::string output;
  Kind kind = Kind::inclusive;
  Op op = Op::add;
  std::optional<std::string> init;  // parsed once the input's dtype is known
  Algorithm algorithm = Algorithm::csdldf;
  Backend backend = Backend::any;
  std::string device;
  // Scan along this axis of the input (numpy's axis): -1 (or 1) scans each row of a 2-D
  // array; unset, a 2-D array is scanned flattened, as numpy does with axis=None.
  std::optional<int> axis;
  // CSR-style segment offsets (an int64 .npy of S + 1 values from 0 to n) for a 1-D input:
  // each segment scanned on its own; a reduction writes one value per segment.
  std::string segments;
};

// Returns the process exit status (0). Bad input (an unreadable IN, an OUT that cannot be
// written) is a UsageError, found before a device is opened; device failures are other
// gpuscan::Errors. OUT is only created or replaced when everything succeeded.
int run_scan(const ScanOptions& options);

}  // namespace gpuscan::cli
