// Requests that no backend can honour, refused the same way everywhere.
#pragma once

#include <optional>
#include <string>

#include "gpuscan/compactor.hpp"
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

// Compaction specs that no backend runs (DESIGN 3e).
inline void check_compact_spec(const CompactSpec& spec) {
  if (spec.algorithm == Algorithm::rts) {
    throw UsageError("compaction runs csdldf or csdl (single pass), not rts");
  }
  if (takes_flags(spec.compaction) && is_float(spec.flags_dtype)) {
    throw UsageError("flags must have an integer dtype (u32, i32, u64, i64), not " +
                     std::string(to_string(spec.flags_dtype)));
  }
}

// What select-if's and partition's predicate compares with, checked against the spec (the
// other operations take no constant: 0 of the spec's dtype).
inline Value compact_constant(const CompactSpec& spec, std::optional<Value> constant) {
  const std::string name(to_string(spec.compaction));
  if (spec.compaction == Compaction::select_if || spec.compaction == Compaction::partition) {
    if (!constant) throw UsageError(name + " needs the constant its predicate compares with");
    if (constant->dtype != spec.dtype) {
      throw UsageError("the predicate's constant is " + std::string(to_string(constant->dtype)) +
                       " but the input is " + std::string(to_string(spec.dtype)));
    }
    return *constant;
  }
  if (constant) throw UsageError(name + " takes no constant");
  return Value{spec.dtype, 0};
}

}  // namespace gpuscan::detail
