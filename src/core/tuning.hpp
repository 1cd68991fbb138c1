// Shared by the backends: which kernel an algorithm runs, and the tuning requests that no
// backend can honour, refused the same way everywhere.
#pragma once

#include "gpuscan/bench.hpp"
#include "gpuscan/error.hpp"

namespace gpuscan::detail {

// The kernel a Scanner of `algorithm` runs.
inline Implementation implementation_of(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::csdl:
      return Implementation::csdl;
    case Algorithm::rts:
      return Implementation::rts;
    default:
      return Implementation::csdldf;
  }
}

inline void check_tuning(Implementation implementation, const Tuning& tuning) {
  if (tuning.blocking_mask && implementation == Implementation::csdl) {
    throw UsageError(
        "csdl cannot run with simulated blocking: its look-back would wait forever for a tile "
        "that never posts (csdldf falls back instead)");
  }
  if (tuning.dispatch_order.value_or(false) && implementation == Implementation::csdl) {
    throw UsageError(
        "dispatch-order tiles need the fallback of csdldf (decoupled look-back could wait "
        "forever)");
  }
}

}  // namespace gpuscan::detail
