// Shared by the backends: the turns of the tile-state spine's two halves. A chained run
// works in one half and zeroes what the run before it wrote in the other, so that the run
// after it finds that half all NOT_READY with no fill of its own (docs/protocol.md, "Reset
// between runs"). This holds only while runs execute in the order they are recorded.
#pragma once

#include <array>
#include <cstddef>

namespace gpuscan::detail {

class SpineHalves {
 public:
  struct Turn {
    std::size_t half;         // where the run works: 0 or 1
    std::size_t clear_half;   // the other half ...
    std::size_t clear_count;  // ... and how much of it the run must zero
  };

  // The next run's turn, for a run that writes `count` units (words or bytes) of its half.
  Turn take(std::size_t count) {
    half_ ^= 1;
    const std::size_t other = half_ ^ 1;
    const Turn turn{half_, other, dirty_[other]};
    dirty_[other] = 0;
    dirty_[half_] = count;
    return turn;
  }

  // The half of the latest run.
  std::size_t last_half() const { return half_; }

  // Both halves are zero again (a new, larger spine).
  void forget_writes() { dirty_ = {0, 0}; }

 private:
  std::size_t half_ = 1;
  std::array<std::size_t, 2> dirty_{};  // what the last run in each half wrote
};

}  // namespace gpuscan::detail
