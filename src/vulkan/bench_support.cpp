#include "vulkan/bench_support.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace gpuscan::vulkan {

std::size_t flush_bytes(const DeviceInfo& info) {
  return info.is_cpu() ? std::size_t{32} << 20 : std::size_t{512} << 20;
}

bool warmed_up(std::chrono::duration<double> busy, double run_seconds, double previous_seconds) {
  constexpr std::chrono::duration<double> min_busy{1.0};
  constexpr std::chrono::duration<double> max_busy{3.0};
  constexpr double settled = 0.02;  // a run's time in two batches within 2%
  if (busy >= max_busy) return true;
  return busy >= min_busy && previous_seconds > 0 &&
         std::abs(run_seconds - previous_seconds) <= settled * previous_seconds;
}

void warm_up(const Context& context, const std::function<void(VkCommandBuffer)>& record_batch) {
  using clock = std::chrono::steady_clock;
  constexpr double batch_seconds = 0.02;  // short enough to stop near warmed_up's minimum
  // The first batch builds the pipelines (with a cold driver cache that alone can take most
  // of the minimum), so the busy time counts from its end.
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
    if (warmed_up(now - start, per_run, previous)) return;
    previous = per_run;
    repeats = std::clamp<std::size_t>(
        static_cast<std::size_t>(static_cast<double>(repeats) * batch_seconds / took), 1, 4096);
  }
}

}  // namespace gpuscan::vulkan
