#include "vulkan/bench_support.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace gpuscan::vulkan {

std::size_t flush_bytes(const DeviceInfo& info) {
  return info.is_cpu() ? std::size_t{32} << 20 : std::size_t{512} << 20;
}

void warm_up(const Context& context, const std::function<void(VkCommandBuffer)>& record_batch) {
  using clock = std::chrono::steady_clock;
  // bench_support.hpp says why: busy at least min_busy, then until a run takes as long in one
  // batch as in the batch before (the clock has stopped climbing), never past max_busy.
  constexpr std::chrono::milliseconds min_busy{1000};
  constexpr std::chrono::milliseconds max_busy{3000};
  constexpr double settled = 0.02;        // a run's time in two batches within 2%
  constexpr double batch_seconds = 0.02;  // short enough to stop near min_busy
  // The first batch builds the pipelines (with a cold driver cache that alone can take most
  // of min_busy), so the busy time counts from its end.
  context.submit(record_batch);
  if (context.info().is_cpu()) return;
  const clock::time_point start = clock::now();
  std::size_t repeats = 1;
  double previous = 0;  // seconds a run took in the batch before
  for (;;) {
    const clock::time_point before = clock::now();
    context.submit([&](VkCommandBuffer cmd) {
      for (std::size_t r = 0; r < repeats; ++r) record_batch(cmd);
    });
    const clock::time_point now = clock::now();
    const double took = std::chrono::duration<double>(now - before).count();
    const double per_run = took / static_cast<double>(repeats);
    const bool steady = previous > 0 && std::abs(per_run - previous) <= settled * previous;
    if (now - start >= max_busy || (now - start >= min_busy && steady)) return;
    previous = per_run;
    repeats = std::clamp<std::size_t>(
        static_cast<std::size_t>(static_cast<double>(repeats) * batch_seconds / took), 1, 4096);
  }
}

}  // namespace gpuscan::vulkan
