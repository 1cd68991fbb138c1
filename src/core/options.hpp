// Requests that no backend can honour, refused the same way everywhere.
#pragma once

#include "gpuscan/error.hpp"
#include "gpuscan/testing.hpp"

namespace gpuscan::detail {

inline void check_options(Algorithm algorithm, const testing::Options& options) {
  if (options.tuning.max_spins == 0) throw UsageError("max spins must be at least 1");
  if (algorithm != Algorithm::csdl) return;
  if (options.blocking_mask) {
    throw UsageError(
        "csdl cannot run with simulated blocking: its look-back would wait forever for a tile "
        "that never posts (csdldf falls back instead)");
  }
  if (options.dispatch_order.value_or(false)) {
    throw UsageError(
        "dispatch-order tiles need the fallback of csdldf (decoupled look-back could wait "
        "forever)");
  }
}

}  // namespace gpuscan::detail
